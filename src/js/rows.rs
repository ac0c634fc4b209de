//! Rows as JSON for the JS layer to turn into objects. `write_rows` writes a statement's
//! rows as arrays of values under one row shape: `[shape, [v, …], [v, …]]`, where `shape`
//! is the number of a shape registered here (its keys: [`row_keys`]) or, once the
//! registry is full, the keys themselves. The JS layer builds every row of a shape with
//! one function of its own (one hidden class per shape; lib/protocol.cjs), which costs
//! far less than parsing each row's keys again. Keys are each column's name in SQLite's
//! column order and, for a shaped row (the store's `parse*Row` shapes, src/store/rows.rs),
//! each stored `*_json` column parsed and appended under its short name (the original's
//! `parseJson` with its fallback). `RowWriter::write_one` writes the current row alone,
//! for the facade's iterators.

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::error::SResult;
use crate::js::json_out::{JsonArray, JsonOut};
use crate::sqlite::raw::{self, RawStmt};

use super::shapes::{shape_id, split_keys};

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

/// Where a statement's columns go in its rows, and the rows' shape. Valid while SQLite
/// has not prepared the statement again (a `SELECT *` gains columns when someone alters
/// the table): callers that keep it ([`RowLayout::current`]) check that first.
pub struct RowLayout {
    reprepares: i32,
    shape_of: *const RowShape,
    columns: Vec<Column>,
    /// Where each of the shape's `json` columns is, if the statement has it.
    json_at: [Option<usize>; 4],
    /// The registered shape (None once the registry is full: the keys go inline).
    shape_id: Option<u32>,
    /// The keys, each after a NUL.
    keys: String,
}

impl RowLayout {
    /// Lays out a statement that has been stepped (its columns are current then).
    pub fn new(stmt: &RawStmt, shape: &RowShape) -> Self {
        let mut columns = Vec::with_capacity(stmt.column_count());
        let mut json_at = [None; 4];
        let mut keys = String::with_capacity(16 * stmt.column_count());
        // Each key after a NUL, so that empty keys count too.
        let mut push_key = |key: &str| {
            keys.push('\0');
            keys.push_str(key);
        };
        for i in 0..stmt.column_count() {
            let name = stmt.column_name_bytes(i);
            if let Some(slot) = shape.json.iter().position(|(col, _, _)| col.as_bytes() == name) {
                json_at[slot] = Some(i);
                columns.push(Column::Json);
                continue;
            }
            columns.push(if shape.reflexion_type && name == b"type" {
                Column::ReflexionType
            } else {
                Column::Plain
            });
            push_key(&String::from_utf8_lossy(name));
        }
        for (_, key, _) in shape.json {
            push_key(key);
        }
        RowLayout {
            reprepares: stmt.reprepares(),
            shape_of: shape,
            columns,
            json_at,
            shape_id: shape_id(&keys),
            keys,
        }
    }

    /// The kept layout `memo` if it is still `stmt`'s in `shape`, else a new one kept there.
    pub fn current<'m>(memo: &'m mut Option<RowLayout>, stmt: &RawStmt, shape: &RowShape) -> &'m RowLayout {
        let valid = memo
            .as_ref()
            .is_some_and(|l| l.reprepares == stmt.reprepares() && std::ptr::eq(l.shape_of, shape));
        if !valid {
            *memo = None;
        }
        memo.get_or_insert_with(|| RowLayout::new(stmt, shape))
    }

    /// The number of the rows' shape (None once the registry is full).
    pub fn shape_id(&self) -> Option<u32> {
        self.shape_id
    }
}

/// Writes the rows of one statement in one shape, as a [`RowLayout`] places them.
pub struct RowWriter<'s> {
    shape: &'s RowShape,
    layout: &'s RowLayout,
}

impl<'s> RowWriter<'s> {
    pub fn new(layout: &'s RowLayout, shape: &'s RowShape) -> Self {
        RowWriter { shape, layout }
    }

    /// The head of a rows text: the shape's number, or its keys when it has none.
    fn write_head(&self, out: &mut JsonOut) {
        match self.layout.shape_id {
            Some(id) => out.int(i64::from(id)),
            None => {
                let mut keys = JsonArray::open(out);
                for key in split_keys(&self.layout.keys) {
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
        for (i, column) in self.layout.columns.iter().enumerate() {
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

    /// The statement's current row as a rows text of one row: `[shape, [v, …]]`.
    pub fn write_one(&self, out: &mut JsonOut, stmt: &RawStmt) {
        let mut rows = JsonArray::open(out);
        rows.item(out);
        self.write_head(out);
        rows.item(out);
        self.write_values(out, stmt);
        rows.close(out);
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
        match self.layout.json_at[slot] {
            Some(i) => out.parsed_json(stmt.column(i), fallback),
            None => out.raw(fallback),
        }
    }
}

/// Steps a bound statement and writes its rows (module doc): `[shape, row]` (or `""`,
/// undefined, when there is none) for `get`, `[shape, row, …]` for `all`. Resets the
/// statement either way.
pub fn write_rows(conn: &Connection, stmt: &mut RawStmt, shape: &RowShape, first_only: bool) -> SResult<String> {
    write_rows_kept(conn, stmt, shape, first_only, &mut None)
}

/// [`write_rows`] with the statement's layout kept in `memo` between calls.
pub fn write_rows_kept(
    conn: &Connection,
    stmt: &mut RawStmt,
    shape: &RowShape,
    first_only: bool,
    memo: &mut Option<RowLayout>,
) -> SResult<String> {
    let status = stmt.step();
    write_stepped_rows(conn, stmt, shape, first_only, status, memo)
}

/// [`write_rows_kept`] for a statement whose first step gave `status`.
pub fn write_stepped_rows(
    conn: &Connection,
    stmt: &mut RawStmt,
    shape: &RowShape,
    first_only: bool,
    mut status: i32,
    memo: &mut Option<RowLayout>,
) -> SResult<String> {
    // Laid out after the first step: a statement that SQLite prepared again there (the
    // schema changed) may have other columns than before.
    let layout = RowLayout::current(memo, stmt, shape);
    let writer = RowWriter::new(layout, shape);
    let mut out = JsonOut::new();
    if !first_only || status == ffi::SQLITE_ROW {
        let mut rows = JsonArray::open(&mut out);
        rows.item(&mut out);
        writer.write_head(&mut out);
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
