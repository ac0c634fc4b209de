//! Rows of facade statements as JSON text, in better-sqlite3's row modes
//! (`Data::GetRowJS`): parsed once by the glue.

use std::borrow::Cow;

use rusqlite::ffi;

use crate::error::SResult;
use crate::js::json_out::{escape_into, JsonOut};
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
    let n = stmt.column_count();
    match mode {
        RowMode::Pluck => write_value(out, stmt, 0),
        RowMode::Raw => {
            out.buf.push('[');
            for i in 0..n {
                if i > 0 {
                    out.buf.push(',');
                }
                write_value(out, stmt, i);
            }
            out.buf.push(']');
        }
        RowMode::Expand => write_expanded(out, stmt, n),
        RowMode::Flat => {
            out.buf.push('{');
            for i in 0..n {
                if i > 0 {
                    out.buf.push(',');
                }
                escape_into(&mut out.buf, &column_name(stmt, i));
                out.buf.push(':');
                write_value(out, stmt, i);
            }
            out.buf.push('}');
        }
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
    let mut out = JsonOut::new();
    out.buf.push('[');
    let mut first = true;
    while stmt.step() == ffi::SQLITE_ROW {
        if !first {
            out.buf.push(',');
        }
        first = false;
        write_row(&mut out, stmt, mode);
    }
    out.buf.push(']');
    if stmt.reset() == ffi::SQLITE_OK {
        Ok(out.finish())
    } else {
        Err(raw::last_error(conn))
    }
}

/// `stmt.columns()` as JSON: name, column, table, database and declared type.
pub(super) fn columns_json(stmt: &RawStmt) -> String {
    let mut out = JsonOut::new();
    out.buf.push('[');
    for i in 0..stmt.column_count() {
        if i > 0 {
            out.buf.push(',');
        }
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
    out.buf.push(']');
    out.finish()
}
