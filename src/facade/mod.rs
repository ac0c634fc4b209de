//! The better-sqlite3-compatible `db` handle: statements prepared by JS callers on the
//! store's own connection, kept prepared in Rust and addressed by id. Rows leave through
//! `js::rows`, in every row mode.
//! The checks, their order and their messages follow better-sqlite3 12
//! (`Statement::JS_*`, `Database::JS_exec`, `lib/methods/transaction.js`).
//!
//! - `prepare`: splitting SQL text into statements the way better-sqlite3 does.
//! - `statement`: run/get/all/iterate/bind; `columns`: `stmt.columns()`.
//! - `database`: exec, pragma, transactions, finalisation.
//! - `connection`: unsafe mode, the `verbose` logger, deserializing, extensions.
//! - `verbose`: calling the logger before a statement runs.
//! - `backup`: `db.backup()` steps and `db.serialize()`.
//! - `functions`, `tables`: `db.function()`, `db.aggregate()` and `db.table()`: JS
//!   callbacks that SQLite runs inside a statement step.
//! - `floor`: the benchmarks' floor (record, replay from Rust).

mod backup;
mod columns;
mod connection;
mod database;
mod floor;
mod functions;
mod prepare;
mod statement;
mod tables;
mod verbose;

pub use statement::{facade_all, facade_check, facade_get, facade_iter_next, facade_run};

use std::cell::RefMut;

use crate::error::{SResult, StoreError};
use crate::native_db::Core;
use crate::sqlite::statements::StatementTable;

const BUSY: &str = "This database connection is busy executing a query";

/// Refuses work while an iterator holds the connection (better-sqlite3's `iterators`).
fn no_iterators(core: &Core) -> SResult<()> {
    // A table borrowed by an outer call (a callback re-entering) counts as busy too.
    if core.statements.try_borrow().map_or(true, |table| table.iterating()) {
        return Err(StoreError::type_error(BUSY));
    }
    Ok(())
}

/// [`no_iterators`], except that unsafe mode allows what better-sqlite3's
/// `REQUIRE_DATABASE_NO_ITERATORS_UNLESS_UNSAFE` allows: writes while iterating.
fn no_iterators_unless_unsafe(core: &Core) -> SResult<()> {
    match core.statements.try_borrow() {
        Ok(table) if !table.iterating() || core.switches.unsafe_mode.get() => Ok(()),
        _ => Err(StoreError::type_error(BUSY)),
    }
}

/// The statement table, unless an outer facade call is using it (a caller's getter
/// re-entering during binding): then the connection is busy, as in better-sqlite3.
fn statements(core: &Core) -> SResult<RefMut<'_, StatementTable>> {
    core.statements
        .try_borrow_mut()
        .map_err(|_| StoreError::type_error(BUSY))
}
