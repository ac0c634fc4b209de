//! Rows as JSON for the JS layer to turn into objects. `write_rows` writes a statement's
//! rows as arrays of values under one row shape: `[shape, [v, …], [v, …]]`, where `shape`
//! is the number of a shape registered here (its keys: [`row_keys`]) or, once the
//! registry is full, the keys themselves. The JS layer builds every row of a shape with
//! one function of its own (one hidden class per shape; lib/protocol.cjs), which costs
//! far less than parsing each row's keys again. Keys are each column's name in SQLite's
//! column order and, for a shaped row (the store's `parse*Row` shapes, src/store/rows.rs),
//! each stored `*_json` column parsed and appended under its short name (the original's
//! `parseJson` with its fallback). `RowWriter::write` writes one row as an object, for the
//! facade's iterators.

use std::cell::RefCell;
use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;
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

/// Shapes seen in this thread (a JS realm's addon calls all run on its thread): their
/// keys, joined by NUL, by number and numbers by keys.
#[derive(Default)]
struct Shapes {
    ids: HashMap<String, u32>,
    keys: Vec<String>,
}

/// Numbered shapes kept at most: past this (SQL made up per call with ever new column
/// names) a text carries its keys itself and nothing more is kept.
const MAX_SHAPES: usize = 4096;

thread_local! {
    static SHAPES: RefCell<Shapes> = RefCell::new(Shapes::default());
}

/// The number of the shape with these keys (joined by NUL), registered on first sight;
/// None when the registry is full.
fn shape_id(joined: &str) -> Option<u32> {
    SHAPES.with(|shapes| {
        let mut shapes = shapes.borrow_mut();
        if let Some(&id) = shapes.ids.get(joined) {
            return Some(id);
        }
        if shapes.keys.len() >= MAX_SHAPES {
            return None;
        }
        let id = shapes.keys.len() as u32;
        shapes.keys.push(joined.to_string());
        shapes.ids.insert(joined.to_string(), id);
        Some(id)
    })
}

/// Keys joined by NUL, one by one (none for an empty text).
fn split_keys(joined: &str) -> impl Iterator<Item = &str> {
    joined.split('\0').filter(move |_| !joined.is_empty())
}

/// The keys of row shape `id`, in order (the JS layer asks once per shape).
#[napi]
pub fn row_keys(id: u32) -> Result<Vec<String>> {
    SHAPES.with(|shapes| {
        let shapes = shapes.borrow();
        let joined = shapes
            .keys
            .get(id as usize)
            .ok_or_else(|| Error::new(Status::InvalidArg, format!("no row shape {id}")))?;
        Ok(split_keys(joined).map(str::to_string).collect())
    })
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

    /// The output keys joined by NUL: each plain column's name, then the JSON keys.
    fn joined_keys(&self, stmt: &RawStmt) -> String {
        let mut joined = String::with_capacity(16 * self.columns.len());
        let mut push = |key: &str| {
            if !joined.is_empty() {
                joined.push('\0');
            }
            joined.push_str(key);
        };
        for (i, column) in self.columns.iter().enumerate() {
            if *column != Column::Json {
                push(&String::from_utf8_lossy(stmt.column_name_bytes(i)));
            }
        }
        for (_, key, _) in self.shape.json {
            push(key);
        }
        joined
    }

    /// The head of a rows text: the shape's number, or its keys when it has none.
    fn write_head(&self, out: &mut JsonOut, stmt: &RawStmt) {
        let joined = self.joined_keys(stmt);
        match shape_id(&joined) {
            Some(id) => out.int(i64::from(id)),
            None => {
                let mut keys = JsonArray::open(out);
                for key in split_keys(&joined) {
                    keys.item(out);
                    out.str(key);
                }
                keys.close(out);
            }
        }
    }

    /// The statement's current row as an array of values in the order of the keys.
    fn write_values(&self, out: &mut JsonOut, stmt: &RawStmt) {
        let mut values = JsonArray::open(out);
        for (i, column) in self.columns.iter().enumerate() {
            if *column == Column::Json {
                continue;
            }
            values.item(out);
            self.write_column(out, stmt, i, *column);
        }
        for (slot, (_, _, fallback)) in self.shape.json.iter().enumerate() {
            values.item(out);
            self.write_json(out, stmt, slot, fallback);
        }
        values.close(out);
    }

    /// The statement's current row as an object.
    pub fn write(&self, out: &mut JsonOut, stmt: &RawStmt) {
        out.buf.push('{');
        let mut first = true;
        for (i, column) in self.columns.iter().enumerate() {
            if *column == Column::Json {
                continue;
            }
            out.key(&mut first, &String::from_utf8_lossy(stmt.column_name_bytes(i)));
            self.write_column(out, stmt, i, *column);
        }
        for (slot, (_, key, fallback)) in self.shape.json.iter().enumerate() {
            out.key(&mut first, key);
            self.write_json(out, stmt, slot, fallback);
        }
        out.buf.push('}');
    }

    fn write_column(&self, out: &mut JsonOut, stmt: &RawStmt, i: usize, column: Column) {
        let v = stmt.column(i);
        if column == Column::ReflexionType && !value_truthy(v) {
            out.str("reflexion");
        } else {
            out.value(v);
        }
    }

    fn write_json(&self, out: &mut JsonOut, stmt: &RawStmt, slot: usize, fallback: &str) {
        match self.json_at[slot] {
            Some(i) => out.parsed_json(stmt.column(i), fallback),
            None => out.raw(fallback),
        }
    }
}

/// Steps a bound statement and writes its rows (module doc): `[shape, row]` (or `""`,
/// undefined, when there is none) for `get`, `[shape, row, …]` for `all`. Resets the
/// statement either way.
pub fn write_rows(conn: &Connection, stmt: &mut RawStmt, shape: &RowShape, first_only: bool) -> SResult<String> {
    let status = stmt.step();
    write_stepped_rows(conn, stmt, shape, first_only, status)
}

/// The number of the shape of a plain row (every column under its name) of `stmt`, a
/// statement stepped at least once; None when the registry is full.
pub fn plain_shape_id(stmt: &RawStmt) -> Option<u32> {
    let writer = RowWriter::new(stmt, &RAW);
    shape_id(&writer.joined_keys(stmt))
}

/// [`write_rows`] for a statement whose first step gave `status`.
pub fn write_stepped_rows(
    conn: &Connection,
    stmt: &mut RawStmt,
    shape: &RowShape,
    first_only: bool,
    mut status: i32,
) -> SResult<String> {
    // Laid out after the first step: a statement that SQLite prepared again there (the
    // schema changed) may have other columns than before.
    let writer = RowWriter::new(stmt, shape);
    let mut out = JsonOut::new();
    if !first_only || status == ffi::SQLITE_ROW {
        let mut rows = JsonArray::open(&mut out);
        rows.item(&mut out);
        writer.write_head(&mut out, stmt);
        while status == ffi::SQLITE_ROW {
            rows.item(&mut out);
            writer.write_values(&mut out, stmt);
            if first_only {
                break;
            }
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
