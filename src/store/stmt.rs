//! The statement type of the store's SQL tables (`agents`, `roles`, … each list theirs):
//! a leaf module, so that the areas and the registry that runs them (`statements`) do not
//! import each other.

use super::parsed_rows::{RowShape, PLAIN};
use crate::store::schema::SchemaVersion;

/// What running a statement means for the large-log indexes (`scale`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Inserts a message: the rowid it gets may reach the threshold.
    InsertsMessage,
    /// A per-tick read: notices a log that grew by other ways.
    TickRead,
}

/// One statement of the store.
#[derive(Clone, Copy)]
pub struct Stmt {
    /// The original's name for it (`S.<name>` in `lib/store/`).
    pub name: &'static str,
    pub sql: &'static str,
    /// The same statement written for the large-log indexes, run once they exist. It
    /// binds its values as `sql` does (numbered parameters stand for the original's `?`s).
    pub large_sql: Option<&'static str>,
    pub rows: &'static RowShape,
    pub effect: Effect,
    /// Prepared when the store opens, as the original prepared its statements there: a
    /// file whose schema lacks a column they use fails in createStore.
    pub at_open: bool,
    /// The schema versions whose store has this statement: a name whose SQL changed
    /// between versions is listed once per form (`until` / `since`).
    pub first: SchemaVersion,
    pub last: SchemaVersion,
}

impl Stmt {
    pub const fn new(name: &'static str, sql: &'static str) -> Stmt {
        Stmt {
            name,
            sql,
            large_sql: None,
            rows: &PLAIN,
            effect: Effect::None,
            at_open: true,
            first: SchemaVersion::V6,
            last: SchemaVersion::V8,
        }
    }
    pub const fn rows(self, rows: &'static RowShape) -> Stmt {
        Stmt { rows, ..self }
    }
    pub const fn large(self, large_sql: &'static str) -> Stmt {
        Stmt {
            large_sql: Some(large_sql),
            ..self
        }
    }
    pub const fn effect(self, effect: Effect) -> Stmt {
        Stmt { effect, ..self }
    }
    /// This form serves the stores up to `version`.
    pub const fn until(self, version: SchemaVersion) -> Stmt {
        Stmt { last: version, ..self }
    }
    /// This form serves the stores from `version` on.
    pub const fn since(self, version: SchemaVersion) -> Stmt {
        Stmt { first: version, ..self }
    }
    pub fn serves(&self, version: SchemaVersion) -> bool {
        self.first <= version && version <= self.last
    }
    /// Prepared on first use (the original prepared it per call).
    pub const fn per_call(self) -> Stmt {
        Stmt { at_open: false, ..self }
    }
}
