//! The better-sqlite3-compatible `db` handle: statements prepared by JS callers on the
//! store's own connection, kept prepared in Rust and addressed by id. Rows leave through
//! `engine::rows`, in every row mode.
//! The checks, their order and their messages follow better-sqlite3 12
//! (`Statement::JS_*`, `Database::JS_exec`, `lib/methods/transaction.js`).
//!
//! - `prepare`: splitting SQL text into statements the way better-sqlite3 does.
//! - `busy`: better-sqlite3's busy rules, one state per connection and statement.
//! - `statement`: run/get/all/iterate/bind; `columns`: `stmt.columns()`.
//! - `objects`: better-sqlite3's own data properties on Statement and iterator objects.
//! - `database`: exec, pragma, transactions, finalisation.
//! - `connection`: unsafe mode, the `verbose` logger, deserializing, extensions.
//! - `verbose`: calling the logger before a statement runs.
//! - `backup`: `db.backup()` steps and `db.serialize()`.
//! - `functions`, `tables`: `db.function()`, `db.aggregate()` and `db.table()`: JS
//!   callbacks that SQLite runs inside a statement step.
//! - `floor`: the benchmarks' floor (record, replay from Rust).

mod columns;
mod methods;
mod objects;
mod options;
mod prepare;
mod registrations;
mod statement;
mod verbose;

pub use objects::{iterator_traits, statement_traits};
pub use statement::{facade_all, facade_check, facade_get, facade_iter_next, facade_run};

use crate::engine::connection::busy::{no_iterators, no_iterators_unless_unsafe, statements};
