//! Statements handed out to JS by id (the facade's `db.prepare`), kept prepared until
//! their JS object is collected or the connection closes, and the count of open
//! iterators that makes the connection "busy".

use crate::engine::handles::Handles;
use crate::error::{SResult, StoreError};
use rusqlite::Connection;

use crate::engine::statement::Statement;

/// One statement held for JS.
pub struct HeldStmt {
    pub stmt: Statement,
    /// `stmt.bind(...)` was called: the bindings are permanent.
    pub bound: bool,
    /// An `iterate()` over it is open.
    iterating: bool,
    /// How its rows are laid out, kept while SQLite does not prepare it again.
    pub layout: Option<crate::engine::rows::RowLayout>,
    /// Its named parameters' keys, made when an object is first bound to it.
    pub named_keys: Option<crate::engine::bind::NamedKeys>,
}

impl HeldStmt {
    pub fn is_iterating(&self) -> bool {
        self.iterating
    }
}

#[derive(Default)]
pub struct StatementTable {
    held: Handles<HeldStmt>,
    iterators: u32,
}

/// better-sqlite3's limit on simultaneously open iterators.
const MAX_ITERATORS: u32 = u16::MAX as u32;

impl StatementTable {
    /// Finalizes every statement (before the connection closes).
    pub fn clear(&mut self) {
        self.held.clear();
        self.iterators = 0;
    }

    pub fn insert(&mut self, stmt: Statement) -> u32 {
        self.held.insert(HeldStmt {
            stmt,
            bound: false,
            iterating: false,
            layout: None,
            named_keys: None,
        })
    }

    pub fn get(&mut self, id: u32) -> SResult<&mut HeldStmt> {
        self.held
            .get_mut(id)
            .ok_or_else(|| StoreError::type_error("The statement was finalized"))
    }

    /// Finalizes one statement (its JS object was collected).
    pub fn remove(&mut self, id: u32) {
        if let Some(held) = self.held.remove(id) {
            if held.iterating {
                self.iterators -= 1;
            }
        }
    }

    /// Whether any iterator is open (the connection is then busy for other work).
    pub fn iterating(&self) -> bool {
        self.iterators > 0
    }

    /// Refuses one more iterator past better-sqlite3's limit (checked before binding).
    pub fn may_begin_iteration(&self) -> SResult<()> {
        if self.iterators >= MAX_ITERATORS {
            return Err(StoreError::range_error("Too many active database iterators"));
        }
        Ok(())
    }

    /// Marks statement `id` as iterated.
    pub fn begin_iteration(&mut self, id: u32) -> SResult<()> {
        self.may_begin_iteration()?;
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

/// Statements a connection keeps prepared for its own use (the store's): fixed ones by
/// number, prepared on first use, and ones whose text is built per call, the most
/// recently used few by their text.
#[derive(Default)]
pub struct StatementCache {
    fixed: Vec<Option<Statement>>,
    /// Most recently used last.
    by_text: Vec<(String, Statement)>,
}

/// How many per-call texts stay prepared (a store builds a handful of shapes per method).
const BY_TEXT_MAX: usize = 64;

impl StatementCache {
    /// Fixed statement `id`, prepared from `sql` the first time.
    pub fn fixed(&mut self, conn: &Connection, id: usize, sql: &str) -> SResult<&mut Statement> {
        if self.fixed.len() <= id {
            self.fixed.resize_with(id + 1, || None);
        }
        let slot = &mut self.fixed[id];
        if slot.is_none() {
            *slot = Some(prepare_one(conn, sql)?);
        }
        Ok(slot.as_mut().expect("prepared just above"))
    }

    /// The statement of a text built per call.
    pub fn by_text(&mut self, conn: &Connection, sql: &str) -> SResult<&mut Statement> {
        let entry = match self.by_text.iter().position(|(text, _)| text == sql) {
            Some(i) => self.by_text.remove(i),
            None => {
                if self.by_text.len() >= BY_TEXT_MAX {
                    self.by_text.remove(0);
                }
                (sql.to_string(), prepare_one(conn, sql)?)
            }
        };
        self.by_text.push(entry);
        Ok(&mut self.by_text.last_mut().expect("pushed just above").1)
    }

    /// Finalizes everything (before the connection closes).
    pub fn clear(&mut self) {
        self.fixed.clear();
        self.by_text.clear();
    }
}

/// One statement of the store's own SQL (a single statement, never empty).
fn prepare_one(conn: &Connection, sql: &str) -> SResult<Statement> {
    Statement::prepare(conn, sql.as_bytes(), true)?
        .stmt
        .ok_or_else(|| StoreError::error(format!("empty statement: {sql}")))
}
