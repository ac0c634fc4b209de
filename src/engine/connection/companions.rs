//! What a layer above keeps with a connection (the store's state, with its checkpoint
//! thread): found by its type, told of the connection's commits, and dropped after the
//! connection closes. The engine names no companion's type: a layer registers its own.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use super::Core;

/// State a layer above keeps with one connection.
pub trait Companion: Any {
    /// After `db.transaction(fn)` committed its outermost transaction on the connection.
    fn after_commit(&self, _core: &Core) {}
}

#[derive(Default)]
pub struct Companions(RefCell<Vec<Rc<dyn Companion>>>);

impl Companions {
    /// The companion of type `T`, if one was registered.
    pub fn get<T: Companion>(&self) -> Option<Rc<T>> {
        self.0.borrow().iter().find_map(|c| {
            let any: Rc<dyn Any> = c.clone();
            any.downcast::<T>().ok()
        })
    }

    /// The companion of type `T`, registered now with `make`'s value if there is none.
    pub fn get_or_insert_with<T: Companion>(&self, make: impl FnOnce() -> T) -> Rc<T> {
        if let Some(found) = self.get::<T>() {
            return found;
        }
        let made = Rc::new(make());
        self.0.borrow_mut().push(made.clone());
        made
    }

    /// Tells every companion of a commit (`Companion::after_commit`).
    pub fn after_commit(&self, core: &Core) {
        // A companion may look its kind up again meanwhile.
        let all: Vec<Rc<dyn Companion>> = self.0.borrow().clone();
        for companion in all {
            companion.after_commit(core);
        }
    }
}
