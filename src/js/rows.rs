//! Rows as JSON objects: each column under its name, in SQLite's column order, and, for a
//! shaped row (the store's `parse*Row` shapes, src/store/rows.rs), each stored `*_json`
//! column parsed and appended under its short name (the original's `parseJson` with its
//! fallback).

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::error::SResult;
use crate::js::json_out::{JsonArray, JsonOut};
use crate::sqlite::raw::{self, RawStmt};

/// The shape of a table's rows as the original returned them.
pub struct RowShape {
    /// (stored column, output key, fallback JSON), appended in this order after the
    /// other columns.
    pub json: &'static [(&'static str, &'static str, &'static str)],
    /// parseReflexionRow: `type: rest.type || "reflexion"`.
    pub reflexion_type: bool,
}

/// All columns as they are.
pub const RAW: RowShape = RowShape {
    json: &[],
    reflexion_type: false,
};

#[derive(Clone, Copy, PartialEq)]
enum Column {
    Plain,
    /// parseReflexionRow's `type`, with its fallback.
    ReflexionType,
    /// A stored JSON column, written after the others.
    Json,
}

/// Writes the rows of one statement in one shape. Laid out per call, not per prepare: a
/// `SELECT *` gains columns when someone alters the table.
pub struct RowWriter<'s> {
    shape: &'s RowShape,
    columns: Vec<Column>,
    /// Where each of `shape.json`'s columns is, if the statement has it.
    json_at: [Option<usize>; 4],
}

impl<'s> RowWriter<'s> {
    pub fn new(stmt: &RawStmt, shape: &'s RowShape) -> Self {
        let mut columns = Vec::with_capacity(stmt.column_count());
        let mut json_at = [None; 4];
        for i in 0..stmt.column_count() {
            let name = stmt.column_name_bytes(i);
            if let Some(slot) = shape.json.iter().position(|(col, _, _)| col.as_bytes() == name) {
                json_at[slot] = Some(i);
                columns.push(Column::Json);
            } else if shape.reflexion_type && name == b"type" {
                columns.push(Column::ReflexionType);
            } else {
                columns.push(Column::Plain);
            }
        }
        RowWriter {
            shape,
            columns,
            json_at,
        }
    }

    /// The statement's current row.
    pub fn write(&self, out: &mut JsonOut, stmt: &RawStmt) {
        out.buf.push('{');
        let mut first = true;
        for (i, column) in self.columns.iter().enumerate() {
            if *column == Column::Json {
                continue;
            }
            out.key(&mut first, &String::from_utf8_lossy(stmt.column_name_bytes(i)));
            let v = stmt.column(i);
            if *column == Column::ReflexionType && !value_truthy(v) {
                out.str("reflexion");
            } else {
                out.value(v);
            }
        }
        for (slot, (_, key, fallback)) in self.shape.json.iter().enumerate() {
            out.key(&mut first, key);
            match self.json_at[slot] {
                Some(i) => out.parsed_json(stmt.column(i), fallback),
                None => out.raw(fallback),
            }
        }
        out.buf.push('}');
    }
}

/// Steps a bound statement and writes its rows: the first one (or `""`, undefined, when
/// there is none) for `get`, a JSON array for `all`. Resets the statement either way.
pub fn write_rows(conn: &Connection, stmt: &mut RawStmt, shape: &RowShape, first_only: bool) -> SResult<String> {
    let writer = RowWriter::new(stmt, shape);
    let mut out = JsonOut::new();
    let mut status = stmt.step();
    if first_only {
        if status == ffi::SQLITE_ROW {
            writer.write(&mut out, stmt);
        }
    } else {
        let mut rows = JsonArray::open(&mut out);
        while status == ffi::SQLITE_ROW {
            rows.item(&mut out);
            writer.write(&mut out, stmt);
            status = stmt.step();
        }
        rows.close(&mut out);
    }
    let failed = status != ffi::SQLITE_ROW && status != ffi::SQLITE_DONE;
    if stmt.reset() != ffi::SQLITE_OK || failed {
        return Err(raw::last_error(conn));
    }
    Ok(out.finish())
}

/// JS truthiness of a column value as better-sqlite3 would return it.
fn value_truthy(v: ValueRef<'_>) -> bool {
    match v {
        ValueRef::Null => false,
        ValueRef::Integer(i) => i != 0,
        ValueRef::Real(f) => !(f == 0.0 || f.is_nan()),
        ValueRef::Text(t) => !t.is_empty(),
        ValueRef::Blob(_) => true,
    }
}
