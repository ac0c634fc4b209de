//! The better-sqlite3-compatible `db` handle: statements prepared by JS callers.

/// Statements handed to JS, addressed by id.
#[derive(Default)]
pub struct StatementTable {}

impl StatementTable {
    pub fn clear(&mut self) {}
}
