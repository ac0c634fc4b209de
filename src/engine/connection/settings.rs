//! What better-sqlite3 keeps per connection beside SQLite itself, held with the
//! connection (`Core`) so it lives and ends with it: unsafe mode and the `verbose`
//! logger. The busy rules and `database::verbose` read them.

use std::cell::{Cell, OnceCell};

use crate::engine::js::persistent::Persistent;

#[derive(Default)]
pub struct Settings {
    /// `db.unsafeMode()`: writes while iterating are allowed, DEFENSIVE is off.
    pub unsafe_mode: Cell<bool>,
    /// The `verbose` option's function, set once right after opening.
    pub logger: OnceCell<Logger>,
}

pub struct Logger {
    pub function: Persistent,
    /// The connection's handle (what the BUSY result slot names while it runs).
    pub handle: u32,
}
