//! Every statement a connection keeps prepared, in one cache finalized before the
//! connection closes. Its three compartments differ in what a borrow of them means:
//!
//! - `held`: statements handed out to JS by id (`db.prepare`), kept until their JS object
//!   is collected, with the count of open iterators; a call that runs on this table
//!   holds it, which is the connection's "running" state of the busy rules (`busy`).
//! - `kept`: statements the layers above keep by a number of their own or by their text
//!   (the store's, with their row layouts); borrowed while one of them runs, so that a
//!   call re-entering from a caller's getter finds the connection busy.
//! - `control`: the transaction guard's BEGIN, COMMIT, SAVEPOINT and the like, by text;
//!   borrowed only while one steps, so a transaction can open inside either call above.
//!
//! (`db.prepare` of a text it prepared before reuses the Rust statement of the same
//! text without a native call: that map is the JS layer's, `lib/database/database.cjs`,
//! as the statements' lifetimes follow their JS objects' collection.)

use std::cell::RefCell;

use rusqlite::{ffi, Connection};

use crate::engine::bind::NamedKeys;
use crate::engine::handles::Handles;
use crate::engine::rows::RowLayout;
use crate::engine::statement::Statement;
use crate::error::{SResult, StoreError};
use crate::ffi::sqlite::last_error;

/// Every statement of one connection.
#[derive(Default)]
pub struct Statements {
    pub held: RefCell<HeldTable>,
    pub kept: RefCell<KeptStatements>,
    control: RefCell<Vec<(&'static str, Statement)>>,
}

impl Statements {
    /// Finalizes every statement (before the connection closes).
    pub fn clear(&self) {
        self.held.borrow_mut().clear();
        self.kept.borrow_mut().clear();
        self.control.borrow_mut().clear();
    }

    /// Runs the transaction-control statement `sql` (prepared once, kept by its text).
    pub fn control(&self, conn: &Connection, sql: &'static str) -> SResult<()> {
        let mut control = self
            .control
            .try_borrow_mut()
            .map_err(|_| StoreError::type_error("This database connection is busy executing a query"))?;
        let at = match control.iter().position(|(text, _)| *text == sql) {
            Some(at) => at,
            None => {
                control.push((sql, prepare_one(conn, sql)?));
                control.len() - 1
            }
        };
        let stmt = &mut control[at].1;
        let status = stmt.step();
        let reset = stmt.reset();
        match (status, reset) {
            (ffi::SQLITE_DONE, ffi::SQLITE_OK) => Ok(()),
            _ => Err(last_error(conn)),
        }
    }
}

/// One statement held for JS.
pub struct HeldStmt {
    pub stmt: Statement,
    /// `stmt.bind(...)` was called: the bindings are permanent.
    pub bound: bool,
    /// An `iterate()` over it is open.
    iterating: bool,
    /// How its rows are laid out, kept while SQLite does not prepare it again.
    pub layout: Option<RowLayout>,
    /// Its named parameters' keys, made when an object is first bound to it.
    pub named_keys: Option<NamedKeys>,
}

impl HeldStmt {
    pub fn is_iterating(&self) -> bool {
        self.iterating
    }
}

/// The statements held for JS, by id.
#[derive(Default)]
pub struct HeldTable {
    held: Handles<HeldStmt>,
    iterators: u32,
}

/// better-sqlite3's limit on simultaneously open iterators.
const MAX_ITERATORS: u32 = u16::MAX as u32;

impl HeldTable {
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

/// One statement kept by a layer above, with how its rows are laid out.
pub struct KeptStmt {
    pub stmt: Statement,
    pub layout: Option<RowLayout>,
}

/// Statements the layers above keep prepared: ones by a number of the caller's (the
/// store numbers its statements), prepared on first use, and ones whose text is built per
/// call, the most recently used few by their text.
#[derive(Default)]
pub struct KeptStatements {
    numbered: Vec<Option<KeptStmt>>,
    /// Most recently used last.
    by_text: Vec<(String, KeptStmt)>,
}

/// How many per-call texts stay prepared (a store builds a handful of shapes per method).
const BY_TEXT_MAX: usize = 64;

impl KeptStatements {
    /// Statement number `n`, prepared from `sql` the first time.
    pub fn numbered(&mut self, conn: &Connection, n: usize, sql: &str) -> SResult<&mut KeptStmt> {
        if self.numbered.len() <= n {
            self.numbered.resize_with(n + 1, || None);
        }
        let slot = &mut self.numbered[n];
        if slot.is_none() {
            *slot = Some(KeptStmt {
                stmt: prepare_one(conn, sql)?,
                layout: None,
            });
        }
        Ok(slot.as_mut().expect("prepared just above"))
    }

    /// The statement of a text built per call.
    pub fn by_text(&mut self, conn: &Connection, sql: &str) -> SResult<&mut KeptStmt> {
        let entry = match self.by_text.iter().position(|(text, _)| text == sql) {
            Some(i) => self.by_text.remove(i),
            None => {
                if self.by_text.len() >= BY_TEXT_MAX {
                    self.by_text.remove(0);
                }
                let kept = KeptStmt {
                    stmt: prepare_one(conn, sql)?,
                    layout: None,
                };
                (sql.to_string(), kept)
            }
        };
        self.by_text.push(entry);
        Ok(&mut self.by_text.last_mut().expect("pushed just above").1)
    }

    /// Finalizes everything (before the connection closes).
    pub fn clear(&mut self) {
        self.numbered.clear();
        self.by_text.clear();
    }
}

/// One statement of SQL the engine or the store wrote (a single statement, never empty).
fn prepare_one(conn: &Connection, sql: &str) -> SResult<Statement> {
    Statement::prepare(conn, sql.as_bytes(), true)?
        .stmt
        .ok_or_else(|| StoreError::error(format!("empty statement: {sql}")))
}
