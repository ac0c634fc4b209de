//! Rows out of SQLite: the one path every read takes (the facade's `get`, `all`,
//! `iterate` and `pragma` in each row mode, with or without safe integers, and the store's
//! own reads).
//!
//! - `layout`: which columns a statement's rows take and how, and their form.
//! - `forms`: the numbered forms the JS layer builds rows by (lib/database/rows.cjs).
//! - `out`: handing rows to JS: many through the JS row filler a chunk at a time, one as
//!   its lone value or through the filler, a plucked one as its value alone.

mod forms;
mod layout;
mod out;

pub use layout::{RowLayout, RowShape, PLAIN};
pub use out::{no_row, one_row, plucked, RowBatch};

use rusqlite::{ffi, Connection};

use crate::engine::js::protocol::RowMode;
use crate::engine::statement::Statement;
use crate::error::SResult;
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite::{self as raw, RawStmt};

/// How a read wants its rows: the statement's shape, the row mode and whether INTEGER
/// values read as BigInt.
#[derive(Clone, Copy)]
pub struct Read<'s> {
    pub shape: &'s RowShape,
    pub mode: RowMode,
    pub safe_integers: bool,
}

impl Read<'static> {
    /// A facade read: the columns as they are.
    pub fn plain(mode: RowMode, safe_integers: bool) -> Self {
        Read {
            shape: &PLAIN,
            mode,
            safe_integers,
        }
    }
}

/// Steps a bound statement to its end and returns its rows as a JS array, then resets
/// it (`memo` keeps its layout between calls). The columns are laid out after the first
/// step: a statement SQLite prepared again there may have other columns than before.
pub fn all_rows(
    js: Napi,
    conn: &Connection,
    stmt: &mut Statement,
    memo: &mut Option<RowLayout>,
    read: Read<'_>,
) -> SResult<Raw> {
    let stepped = step_all(js, stmt, memo, read);
    let reset = stmt.reset();
    let (rows, status) = stepped?;
    if status != ffi::SQLITE_DONE || reset != ffi::SQLITE_OK {
        return Err(raw::last_error(conn));
    }
    Ok(rows)
}

fn step_all(js: Napi, stmt: &mut Statement, memo: &mut Option<RowLayout>, read: Read<'_>) -> SResult<(Raw, i32)> {
    let mut status = stmt.step();
    if status != ffi::SQLITE_ROW {
        return Ok((js.array(0)?, status));
    }
    let layout = RowLayout::current(memo, stmt, read.shape, read.mode);
    let mut batch = RowBatch::all(js, layout, read.safe_integers)?;
    while status == ffi::SQLITE_ROW {
        batch.push(stmt)?;
        status = stmt.step();
    }
    Ok((batch.finish()?, status))
}

/// Steps a bound statement once and returns its first row as [`one_row`] gives it
/// ([`no_row`] when there is none), then resets it.
pub fn first_row(
    js: Napi,
    conn: &Connection,
    stmt: &mut Statement,
    memo: &mut Option<RowLayout>,
    read: Read<'_>,
) -> SResult<Raw> {
    match stmt.step() {
        ffi::SQLITE_ROW => {
            let row = current_row(js, stmt, memo, read);
            stmt.reset();
            row
        }
        ffi::SQLITE_DONE => {
            stmt.reset();
            no_row(js)
        }
        _ => {
            stmt.reset();
            Err(raw::last_error(conn))
        }
    }
}

/// The current row of a stepped statement, as [`one_row`] gives it; a plucked one as
/// [`plucked`] gives it, with no layout and no form (JS knows a plucked read by its mode).
pub fn current_row(js: Napi, stmt: &RawStmt, memo: &mut Option<RowLayout>, read: Read<'_>) -> SResult<Raw> {
    if read.mode == RowMode::Pluck {
        return plucked(js, stmt, read.safe_integers);
    }
    let layout = RowLayout::current(memo, stmt, read.shape, read.mode);
    one_row(js, stmt, layout, read.safe_integers)
}
