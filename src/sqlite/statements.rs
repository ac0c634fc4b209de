//! Statements handed out to JS by id (the facade's `db.prepare`), kept prepared until
//! their JS object is collected or the connection closes, and the count of open
//! iterators that makes the connection "busy".

use super::error::{SResult, StoreError};
use super::raw::RawStmt;

/// One statement held for JS.
pub struct HeldStmt {
    pub stmt: RawStmt,
    /// `stmt.bind(...)` was called: the bindings are permanent.
    pub bound: bool,
    /// An `iterate()` over it is open.
    iterating: bool,
}

#[derive(Default)]
pub struct StatementTable {
    slots: Vec<Option<HeldStmt>>,
    free: Vec<u32>,
    iterators: u32,
}

/// better-sqlite3's limit on simultaneously open iterators.
const MAX_ITERATORS: u32 = u16::MAX as u32;

impl StatementTable {
    /// Finalizes every statement (before the connection closes).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.iterators = 0;
    }

    pub fn insert(&mut self, stmt: RawStmt) -> u32 {
        let held = HeldStmt {
            stmt,
            bound: false,
            iterating: false,
        };
        match self.free.pop() {
            Some(id) => {
                if let Some(slot) = self.slots.get_mut(id as usize) {
                    *slot = Some(held);
                }
                id
            }
            None => {
                self.slots.push(Some(held));
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn get(&mut self, id: u32) -> SResult<&mut HeldStmt> {
        match self.slots.get_mut(id as usize) {
            Some(Some(s)) => Ok(s),
            _ => Err(StoreError::type_error("The statement was finalized")),
        }
    }

    /// Finalizes one statement (its JS object was collected).
    pub fn remove(&mut self, id: u32) {
        if let Some(slot) = self.slots.get_mut(id as usize) {
            if let Some(held) = slot.take() {
                if held.iterating {
                    self.iterators -= 1;
                }
                self.free.push(id);
            }
        }
    }

    /// Whether any iterator is open (the connection is then busy for other work).
    pub fn iterating(&self) -> bool {
        self.iterators > 0
    }

    /// Marks statement `id` as iterated.
    pub fn begin_iteration(&mut self, id: u32) -> SResult<()> {
        if self.iterators >= MAX_ITERATORS {
            return Err(StoreError::range_error("Too many active database iterators"));
        }
        let held = self.get(id)?;
        if !held.iterating {
            held.iterating = true;
            self.iterators += 1;
        }
        Ok(())
    }

    /// Ends the iteration of statement `id`; a second end (an iterator returned twice)
    /// changes nothing, so the count can never wrap.
    pub fn end_iteration(&mut self, id: u32) {
        if let Ok(held) = self.get(id) {
            if held.iterating {
                held.iterating = false;
                self.iterators -= 1;
            }
        }
    }
}
