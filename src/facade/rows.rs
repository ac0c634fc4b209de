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

/// The current row in `mode`.
pub(super) fn write_row(out: &mut JsonOut, stmt: &RawStmt, mode: RowMode) {
    match mode {
        RowMode::Pluck => write_value(out, stmt, 0),
        RowMode::Raw => {
            let mut row = JsonArray::open(out);
            for i in 0..stmt.column_count() {
                row.item(out);
                write_value(out, stmt, i);
            }
            row.close(out);
        }
        RowMode::Expand => write_expanded(out, stmt, stmt.column_count()),
        RowMode::Flat => RowWriter::new(&RowLayout::new(stmt, &RAW), &RAW).write(out, stmt),
    }
}

/// `expand()`: one object per table in order of first appearance, "$" for expressions.
fn write_expanded(out: &mut JsonOut, stmt: &RawStmt, n: usize) {
    let mut tables: Vec<(Cow<'_, str>, Vec<usize>)> = Vec::new();
    for i in 0..n {
        let table = stmt.column_meta(i, ColumnMeta::Table).unwrap_or(Cow::Borrowed("$"));
        match tables.iter_mut().find(|(name, _)| *name == table) {
            Some((_, cols)) => cols.push(i),
            None => tables.push((table, vec![i])),
        }
    }
    out.buf.push('{');
    let mut first = true;
    for (table, cols) in &tables {
        out.key(&mut first, table);
        out.buf.push('{');
        let mut first_col = true;
        for &i in cols {
            out.key(&mut first_col, &column_name(stmt, i));
            write_value(out, stmt, i);
        }
        out.buf.push('}');
    }
    out.buf.push('}');
}

/// Steps `stmt` to the end, writing every row in `mode` as one JSON array, then resets it.
pub(super) fn all_rows_json(conn: &Connection, stmt: &mut RawStmt, mode: RowMode) -> SResult<String> {
    if mode == RowMode::Flat {
        return write_rows(conn, stmt, &RAW, false);
    }
    let mut out = JsonOut::new();
    let mut rows = JsonArray::open(&mut out);
    while stmt.step() == ffi::SQLITE_ROW {
        rows.item(&mut out);
        write_row(&mut out, stmt, mode);
    }
    rows.close(&mut out);
    if stmt.reset() == ffi::SQLITE_OK {
        Ok(out.finish())
    } else {
        Err(raw::last_error(conn))
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
