//! The better-sqlite3-compatible `db` handle: statements prepared by JS callers on the
//! store's own connection, kept prepared in Rust and addressed by id. Rows leave as JSON
//! text (one `JSON.parse` in the glue) or, for `get()`, as JS values built directly.
//! The checks, their order and their messages follow better-sqlite3 12
//! (`Statement::JS_*`, `Database::JS_exec`, `lib/methods/transaction.js`).
//!
//! - `prepare`: splitting SQL text into statements the way better-sqlite3 does.
//! - `rows`: rows as JSON text; `js_rows`: rows and values as JS values; `slotted`: a
//!   `get()` row of a few columns in the result slots.
//! - `busy`: better-sqlite3's busy rules, one state per connection and statement.
//! - `statement`: run/get/all/iterate/bind/columns.
//! - `safe_rows`: get/all/iterate/pragma with safe integers (INTEGER as BigInt), rows
//!   as cells in shared memory (`js::cells`) or built as JS values.
//! - `database`: exec, pragma, transactions, finalisation.
//! - `connection`: unsafe mode, the `verbose` logger, deserializing, extensions.
//! - `verbose`: calling the logger before a statement runs.
//! - `backup`: `db.backup()` steps and `db.serialize()`.
//! - `functions`, `tables`: `db.function()`, `db.aggregate()` and `db.table()`: JS
//!   callbacks that SQLite runs inside a statement step.
//! - `floor`: the benchmarks' floor (record, replay from Rust).

mod backup;
mod busy;
mod connection;
mod database;
mod floor;
mod functions;
mod js_rows;
mod objects;
mod prepare;
mod rows;
mod safe_rows;
mod slotted;
mod statement;
mod tables;
mod verbose;

pub use objects::{iterator_traits, statement_traits};
pub use statement::{facade_all, facade_get, facade_run};

use crate::js::protocol::RowMode;

use busy::{no_iterators, no_iterators_unless_unsafe, statements};
