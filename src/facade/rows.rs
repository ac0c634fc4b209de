//! Rows of facade statements as JSON text, in better-sqlite3's row modes
//! (`Data::GetRowJS`): parsed once by the glue.

use std::borrow::Cow;

use rusqlite::ffi;

use crate::error::SResult;
use crate::js::json_out::{JsonArray, JsonOut};
use crate::js::rows::{write_rows, RowLayout, RowWriter, RAW};
use crate::sqlite::raw::{self, ColumnMeta, RawStmt};
use rusqlite::Connection;

use super::RowMode;

/// A column as better-sqlite3 returns it (every number a double, -0 kept).
fn write_value(out: &mut JsonOut, stmt: &RawStmt, i: usize) {
    out.value(stmt.column(i));
}

fn column_name(stmt: &RawStmt, i: usize) -> Cow<'_, str> {
    stmt.column_meta(i, ColumnMeta::Name).unwrap_or_default()
}

/// The current row in `mode`: a plucked value, an array (RAW), or a rows text of one row
/// (FLAT `[shape, values]`, EXPAND `[pairs, values]`) that the glue builds the object from.
pub(super) fn write_row(out: &mut JsonOut, stmt: &RawStmt, mode: RowMode) {
    match mode {
        RowMode::Pluck => write_value(out, stmt, 0),
        RowMode::Raw => write_values(out, stmt),
        RowMode::Expand => {
            let mut rows = JsonArray::open(out);
            rows.item(out);
            write_expand_head(out, stmt);
            rows.item(out);
            write_values(out, stmt);
            rows.close(out);
        }
        RowMode::Flat => RowWriter::new(&RowLayout::new(stmt, &RAW), &RAW).write_one(out, stmt),
    }
}

/// The current row's values in column order.
fn write_values(out: &mut JsonOut, stmt: &RawStmt) {
    let mut row = JsonArray::open(out);
    for i in 0..stmt.column_count() {
        row.item(out);
        write_value(out, stmt, i);
    }
    row.close(out);
}

/// `expand()`'s head: each column's table ("$" for an expression) and name, in pairs
/// `[table, column, table, column, …]`. The glue groups them as better-sqlite3's
/// `GetExpandedRowJS` does (its own property tests and assignments, in column order).
fn write_expand_head(out: &mut JsonOut, stmt: &RawStmt) {
    let mut pairs = JsonArray::open(out);
    for i in 0..stmt.column_count() {
        pairs.item(out);
        out.str(&stmt.column_meta(i, ColumnMeta::Table).unwrap_or(Cow::Borrowed("$")));
        pairs.item(out);
        out.str(&column_name(stmt, i));
    }
    pairs.close(out);
}

/// Steps `stmt` to the end, writing every row in `mode` as one JSON array (EXPAND:
/// `[pairs, values, …]`), then resets it.
pub(super) fn all_rows_json(conn: &Connection, stmt: &mut RawStmt, mode: RowMode) -> SResult<String> {
    if mode == RowMode::Flat {
        return write_rows(conn, stmt, &RAW, false);
    }
    let mut out = JsonOut::new();
    let mut rows = JsonArray::open(&mut out);
    let mut status = stmt.step();
    if mode == RowMode::Expand {
        // Laid out after the first step, when the statement's columns are current.
        rows.item(&mut out);
        write_expand_head(&mut out, stmt);
    }
    while status == ffi::SQLITE_ROW {
        rows.item(&mut out);
        match mode {
            RowMode::Pluck => write_value(&mut out, stmt, 0),
            _ => write_values(&mut out, stmt),
        }
        status = stmt.step();
    }
    rows.close(&mut out);
    let failed = status != ffi::SQLITE_DONE;
    if stmt.reset() != ffi::SQLITE_OK || failed {
        Err(raw::last_error(conn))
    } else {
        Ok(out.finish())
    }
}

/// `stmt.columns()` as JSON: name, column, table, database and declared type.
pub(super) fn columns_json(stmt: &RawStmt) -> String {
    let mut out = JsonOut::new();
    let mut columns = JsonArray::open(&mut out);
    for i in 0..stmt.column_count() {
        columns.item(&mut out);
        let fields = [
            ("name", ColumnMeta::Name),
            ("column", ColumnMeta::Origin),
            ("table", ColumnMeta::Table),
            ("database", ColumnMeta::Database),
            ("type", ColumnMeta::DeclType),
        ];
        out.buf.push('{');
        let mut first = true;
        for (key, which) in fields {
            out.key(&mut first, key);
            match stmt.column_meta(i, which) {
                Some(text) => out.str(&text),
                None => out.null(),
            }
        }
        out.buf.push('}');
    }
    columns.close(&mut out);
    out.finish()
}
