//! Values and RAW rows of facade statements as JS values built directly (`get()`), the
//! way better-sqlite3's `Data::GetValueJS` / `GetRowJS` build them.

use crate::error::SResult;
use crate::js::napi::{Napi, Raw};
use rusqlite::types::ValueRef;

use crate::sqlite::raw::RawStmt;

/// Column `i` of the current row: every number is a double, TEXT a string decoded by V8
/// (invalid UTF-8 as better-sqlite3's `StringFromUtf8` gives it), BLOB a Buffer.
pub(super) fn value_js(js: Napi, stmt: &RawStmt, i: usize) -> SResult<Raw> {
    match stmt.column(i) {
        ValueRef::Integer(n) => js.number(n as f64),
        ValueRef::Real(f) => js.number(f),
        ValueRef::Text(t) => js.string_utf8(t),
        ValueRef::Blob(b) => js.buffer_copy(b),
        ValueRef::Null => js.null(),
    }
}

/// The current row as an array (RAW).
pub(super) fn row_js(js: Napi, stmt: &RawStmt) -> SResult<Raw> {
    let n = stmt.column_count();
    let row = js.array(n)?;
    for i in 0..n {
        js.set_element(row, i as u32, value_js(js, stmt, i)?)?;
    }
    Ok(row)
}
