//! Numbered slots: how JS refers to the native objects it cannot hold (connections,
//! prepared statements, backups). A freed number is reused by the next insert.

pub struct Handles<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Handles {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Handles<T> {
    pub fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(value);
                id
            }
            None => {
                self.slots.push(Some(value));
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn get(&self, id: u32) -> Option<&T> {
        self.slots.get(id as usize)?.as_ref()
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    pub fn remove(&mut self, id: u32) -> Option<T> {
        let value = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some(value)
    }

    /// Drops every value (in slot order).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Handles;

    #[test]
    fn numbers_are_reused_after_removal() {
        let mut h = Handles::default();
        let a = h.insert("a");
        let b = h.insert("b");
        assert_eq!(h.remove(a), Some("a"));
        assert_eq!(h.remove(a), None, "a second removal finds nothing");
        assert_eq!(h.get(a), None);
        let c = h.insert("c");
        assert_eq!(c, a);
        assert_eq!(h.get(b), Some(&"b"));
        assert_eq!(h.get(99), None);
    }
}
