//! How the store's rows leave Rust: one JSON text per call, parsed once by the JS layer.
//! A row keeps SQLite's column order; the original's `parse*Row` helpers are applied
//! here: each stored `*_json` column is dropped from its place and its parsed value
//! appended under the short name (the original's `parseJson` with its fallback).

use rusqlite::ffi;
use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::json_out::{JsonArray, JsonOut};
use crate::sqlite::raw::{self, RawStmt};
use rusqlite::Connection;

/// The shape of a table's rows as the original returned them.
pub struct RowShape {
    /// (stored column, output key, fallback JSON), appended in this order after the
    /// other columns.
    pub json: &'static [(&'static str, &'static str, &'static str)],
    /// parseReflexionRow: `type: rest.type || "reflexion"`.
    pub reflexion_type: bool,
}

/// All columns as they are (role rows, dead letters, counts).
pub const RAW: RowShape = RowShape {
    json: &[],
    reflexion_type: false,
};
pub const AGENT: RowShape = RowShape {
    json: &[
        ("capabilities_json", "capabilities", "[]"),
        ("topics_json", "topics", "[]"),
        ("metadata_json", "metadata", "{}"),
    ],
    reflexion_type: false,
};
pub const MESSAGE: RowShape = RowShape {
    json: &[("payload_json", "payload", "{}")],
    reflexion_type: false,
};
pub const HUMAN_REQUEST: RowShape = RowShape {
    json: &[("schema_json", "schema", "{}"), ("response_json", "response", "null")],
    reflexion_type: false,
};
pub const ASSIGN: RowShape = RowShape {
    json: &[
        ("payload_json", "payload", "{}"),
        ("result_json", "result", "null"),
        ("error_json", "error", "null"),
    ],
    reflexion_type: false,
};
pub const REFLEXION: RowShape = RowShape {
    json: &[
        ("context_json", "context", "{}"),
        ("adaptive_state_json", "adaptive_state", "{}"),
    ],
    reflexion_type: true,
};
pub const CANDIDATE: RowShape = RowShape {
    json: &[("transport_locators_json", "transport_locators", "[]")],
    reflexion_type: false,
};

/// What becomes of each column of a statement's rows. Worked out per call, not per
/// prepare: a `SELECT *` gains columns when someone alters the table through `store.db`.
#[derive(Clone, Copy, PartialEq)]
enum Column {
    Plain,
    /// parseReflexionRow's `type`, with its fallback.
    ReflexionType,
    /// A stored JSON column, written after the others (see `json_at`).
    Json,
}

fn layout(stmt: &RawStmt, shape: &RowShape) -> (Vec<Column>, [Option<usize>; 4]) {
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
    (columns, json_at)
}

fn write_row(out: &mut JsonOut, stmt: &RawStmt, shape: &RowShape, columns: &[Column], json_at: &[Option<usize>; 4]) {
    out.buf.push('{');
    let mut first = true;
    for (i, column) in columns.iter().enumerate() {
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
    for (slot, (_, key, fallback)) in shape.json.iter().enumerate() {
        out.key(&mut first, key);
        match json_at[slot] {
            Some(i) => out.parsed_json(stmt.column(i), fallback),
            None => out.raw(fallback),
        }
    }
    out.buf.push('}');
}

/// Steps a bound statement and writes its rows: the first one (or `""`, undefined, when
/// there is none) for `get`, a JSON array for `all`. Resets the statement either way.
pub fn write_rows(conn: &Connection, stmt: &mut RawStmt, shape: &RowShape, first_only: bool) -> SResult<String> {
    let (columns, json_at) = layout(stmt, shape);
    let mut out = JsonOut::new();
    let mut status = stmt.step();
    if first_only {
        if status == ffi::SQLITE_ROW {
            write_row(&mut out, stmt, shape, &columns, &json_at);
        }
    } else {
        let mut rows = JsonArray::open(&mut out);
        while status == ffi::SQLITE_ROW {
            rows.item(&mut out);
            write_row(&mut out, stmt, shape, &columns, &json_at);
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
