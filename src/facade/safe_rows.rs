//! Reads with safe integers on (`stmt.safeIntegers()`): every INTEGER is a BigInt, which
//! JSON cannot carry. `get`, `all` and `pragma` leave their rows as cells in memory
//! shared with JS (`js::cells`: no Node-API call per value), with the row count, column
//! count and (FLAT) the row shape in result slots; the JS layer (lib/cells.cjs) builds
//! the rows with the same makers as the JSON rows (lib/protocol.cjs). EXPAND rows, the
//! rows of `iterate()`, and every row where the runtime refuses shared memory are built
//! here as JS values (better-sqlite3's `Data::GetRowJS` with `safe_ints`): a FLAT row
//! as an array of its values under the ROW_SHAPE slot's shape, followed by the keys
//! when the shape registry is full. The default reads (statement.rs) never come here.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;
use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::cells::{self, Cells};
use crate::js::create::Made;
use crate::js::napi::{Napi, Raw};
use crate::js::protocol::RowMode;
use crate::js::rows::{RowLayout, RAW};
use crate::js::slots;
use crate::js::value::JsVal;
use crate::native_db::{with_handle, Core};
use crate::sqlite::raw::{self, ColumnMeta, RawStmt};

use super::prepare::prepare_one;
use super::statement::{iter_step, with_started};
use super::statements;
use super::verbose::log_stmt;

/// Column `i` of the current row, an INTEGER as a BigInt.
fn value(js: Napi, stmt: &RawStmt, i: usize) -> SResult<Raw> {
    match stmt.column(i) {
        ValueRef::Integer(n) => js.bigint(n),
        ValueRef::Real(f) => js.number(f),
        ValueRef::Text(t) => js.string_utf8(t),
        ValueRef::Blob(b) => js.buffer_copy(b),
        ValueRef::Null => js.null(),
    }
}

/// The current row's values as an array.
fn values(js: Napi, stmt: &RawStmt) -> SResult<Raw> {
    let n = stmt.column_count();
    let row = js.array(n)?;
    for i in 0..n {
        js.set_element(row, i as u32, value(js, stmt, i)?)?;
    }
    Ok(row)
}

/// `expand()`: one object per table ("$" for expressions), filled with JS's own Set as
/// better-sqlite3 does.
fn expanded(js: Napi, stmt: &RawStmt) -> SResult<Raw> {
    let row = js.object()?;
    for i in 0..stmt.column_count() {
        let table = stmt.column_meta(i, ColumnMeta::Table);
        let table = js.string_utf8(table.as_deref().unwrap_or("$").as_bytes())?;
        let column = js.string_utf8(stmt.column_name_bytes(i))?;
        let v = value(js, stmt, i)?;
        let nested = if js.has_own_property(row, table)? {
            js.property(row, table)?
        } else {
            let nested = js.object()?;
            js.set_property(row, table, nested)?;
            nested
        };
        js.set_property(nested, column, v)?;
    }
    Ok(row)
}

/// The current row in `mode` (FLAT: its values; see the module doc).
fn row(js: Napi, stmt: &RawStmt, mode: RowMode) -> SResult<Raw> {
    match mode {
        RowMode::Pluck => value(js, stmt, 0),
        RowMode::Flat | RowMode::Raw => values(js, stmt),
        RowMode::Expand => expanded(js, stmt),
    }
}

/// The number of a stepped statement's FLAT row shape (`kept`: its shape as of a number
/// of re-prepares), or None once the registry is full.
fn shape_number(stmt: &RawStmt, kept: &mut Option<(i32, u32)>) -> Option<u32> {
    let reprepares = stmt.reprepares();
    let shape = match *kept {
        Some((at, shape)) if at == reprepares => Some(shape),
        _ => RowLayout::new(stmt, &RAW).shape_id(),
    };
    if let Some(shape) = shape {
        *kept = Some((reprepares, shape));
    }
    shape
}

/// The row keys: the columns' names as the shape registry keeps them.
fn column_names(stmt: &RawStmt) -> Vec<String> {
    (0..stmt.column_count())
        .map(|i| String::from_utf8_lossy(stmt.column_name_bytes(i)).into_owned())
        .collect()
}

/// Puts the FLAT row shape in the ROW_SHAPE slot; returns the keys as a JS array when
/// the registry is full (-1: they then travel with the rows).
fn flat_shape(js: Napi, stmt: &RawStmt, kept: &mut Option<(i32, u32)>) -> SResult<Option<Raw>> {
    if let Some(shape) = shape_number(stmt, kept) {
        slots::set(js, slots::ROW_SHAPE, f64::from(shape))?;
        return Ok(None);
    }
    slots::set(js, slots::ROW_SHAPE, -1.0)?;
    let names = column_names(stmt);
    let keys = js.array(names.len())?;
    for (i, key) in names.iter().enumerate() {
        js.set_element(keys, i as u32, js.string_utf8(key.as_bytes())?)?;
    }
    Ok(Some(keys))
}

/// Whether a result in `mode` travels as cells (`js::cells`); else as JS values.
fn as_cells(js: Napi, mode: RowMode) -> bool {
    mode != RowMode::Expand && cells::available(js)
}

/// The columns a row in `mode` has as cells.
fn cell_columns(stmt: &RawStmt, mode: RowMode) -> usize {
    if mode == RowMode::Pluck {
        1
    } else {
        stmt.column_count()
    }
}

/// Puts the FLAT row shape in the ROW_SHAPE slot; when the registry is full (-1) the
/// keys travel after the side values.
fn cell_shape(js: Napi, stmt: &RawStmt, kept: &mut Option<(i32, u32)>, cells: &mut Cells) -> SResult<()> {
    if let Some(shape) = shape_number(stmt, kept) {
        return slots::set(js, slots::ROW_SHAPE, f64::from(shape));
    }
    slots::set(js, slots::ROW_SHAPE, -1.0)?;
    cells.push_keys(column_names(stmt).iter().map(String::as_str));
    Ok(())
}

/// Steps a bound statement (once for `get`, to the end for `all`) and publishes its
/// rows as cells; returns the side text. Resets the statement.
fn cell_rows(
    js: Napi,
    core: &Core,
    stmt: &mut RawStmt,
    kept: &mut Option<(i32, u32)>,
    mode: RowMode,
    first_only: bool,
) -> SResult<Raw> {
    let mut cells = Cells::new();
    let columns = cell_columns(stmt, mode);
    let mut rows = 0u32;
    let mut status = stmt.step();
    while status == ffi::SQLITE_ROW {
        for i in 0..columns {
            cells.push(stmt.column(i));
        }
        rows += 1;
        if first_only {
            break;
        }
        status = stmt.step();
    }
    let failed = status != ffi::SQLITE_ROW && status != ffi::SQLITE_DONE;
    if stmt.reset() != ffi::SQLITE_OK || failed {
        return Err(raw::last_error(&core.conn));
    }
    // The columns' names stay those of the last step's preparation after the reset.
    if rows > 0 && mode == RowMode::Flat {
        cell_shape(js, stmt, kept, &mut cells)?;
    }
    slots::set(js, slots::CELL_ROWS, f64::from(rows))?;
    slots::set(js, slots::CELL_COLUMNS, columns as f64)?;
    cells.publish(js)
}

/// `facadeGet` with safe integers: the row as cells (see `cell_rows`), or in EXPAND
/// mode (or without shared memory) as a JS value (FLAT: its values) or `undefined`.
pub(super) fn get(js: Napi, db: u32, id: u32, mode: RowMode, params: &[Raw]) -> Result<Raw> {
    with_started(js, db, id, params, |core, held| {
        if as_cells(js, mode) {
            return cell_rows(js, core, &mut held.stmt, &mut held.row_shape, mode, true);
        }
        slots::set(js, slots::CELL_ROWS, -1.0)?;
        let result = get_row(js, core, &mut held.stmt, &mut held.row_shape, mode);
        held.stmt.reset();
        result
    })
}

fn get_row(js: Napi, core: &Core, stmt: &mut RawStmt, kept: &mut Option<(i32, u32)>, mode: RowMode) -> SResult<Raw> {
    match stmt.step() {
        ffi::SQLITE_ROW => {
            let out = row(js, stmt, mode)?;
            if mode == RowMode::Flat {
                if let Some(keys) = flat_shape(js, stmt, kept)? {
                    js.set_element(out, stmt.column_count() as u32, keys)?;
                }
            }
            Ok(out)
        }
        ffi::SQLITE_DONE => js.undefined(),
        _ => Err(raw::last_error(&core.conn)),
    }
}

/// `facadeAll` with safe integers: an array of rows (FLAT: arrays of values, the keys
/// after them when the registry is full).
pub(super) fn all(js: Napi, db: u32, id: u32, mode: RowMode, params: &[Raw]) -> Result<Raw> {
    with_started(js, db, id, params, |core, held| {
        if as_cells(js, mode) {
            return cell_rows(js, core, &mut held.stmt, &mut held.row_shape, mode, false);
        }
        slots::set(js, slots::CELL_ROWS, -1.0)?;
        all_rows(js, core, &mut held.stmt, &mut held.row_shape, mode)
    })
}

/// Steps `stmt` to the end, then resets it.
fn all_rows(js: Napi, core: &Core, stmt: &mut RawStmt, kept: &mut Option<(i32, u32)>, mode: RowMode) -> SResult<Raw> {
    let result = collect_rows(js, stmt, kept, mode);
    let reset = stmt.reset();
    let (rows, status) = result?;
    if reset != ffi::SQLITE_OK || status != ffi::SQLITE_DONE {
        return Err(raw::last_error(&core.conn));
    }
    Ok(rows)
}

/// The rows of `stmt` and the status of its last step.
fn collect_rows(js: Napi, stmt: &mut RawStmt, kept: &mut Option<(i32, u32)>, mode: RowMode) -> SResult<(Raw, i32)> {
    let rows = js.array(0)?;
    let mut count = 0u32;
    let mut keys = None;
    let mut status = stmt.step();
    while status == ffi::SQLITE_ROW {
        if count == 0 && mode == RowMode::Flat {
            keys = flat_shape(js, stmt, kept)?;
        }
        js.set_element(rows, count, row(js, stmt, mode)?)?;
        count += 1;
        status = stmt.step();
    }
    if let Some(keys) = keys {
        js.set_element(rows, count, keys)?;
    }
    Ok((rows, status))
}

/// `db.pragma(source, { simple })` when statements are prepared with safe integers (the
/// database's default): the plucked first value, or the FLAT rows as in `all`.
#[napi]
pub fn facade_pragma_safe(env: Env, db: u32, source: JsVal, simple: bool) -> Result<Made> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let (mut stmt, _) = prepare_one(core, &source, true)?;
        let _busy = statements(core)?;
        log_stmt(js, core, &stmt)?;
        let mut kept = None;
        if as_cells(js, RowMode::Flat) {
            let mode = if simple { RowMode::Pluck } else { RowMode::Flat };
            return Ok(Made(cell_rows(js, core, &mut stmt, &mut kept, mode, simple)?));
        }
        slots::set(js, slots::CELL_ROWS, -1.0)?;
        let out = if simple {
            let result = get_row(js, core, &mut stmt, &mut kept, RowMode::Pluck);
            stmt.reset();
            result?
        } else {
            all_rows(js, core, &mut stmt, &mut kept, RowMode::Flat)?
        };
        Ok(Made(out))
    })
}

/// The next row of a safe-integer iterator as a JS value (FLAT as in `get`), or
/// `undefined` at the end (the iterator is then closed).
#[napi]
pub fn facade_iter_next_safe(env: Env, db: u32, id: u32, mode: u32) -> Result<Made> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        if !iter_step(js, core, &mut table, id)? {
            return Ok(Made(js.undefined()?));
        }
        let mode = RowMode::from_wire(mode);
        let held = table.get(id)?;
        let out = row(js, &held.stmt, mode)?;
        if mode == RowMode::Flat {
            if let Some(keys) = flat_shape(js, &held.stmt, &mut held.row_shape)? {
                js.set_element(out, held.stmt.column_count() as u32, keys)?;
            }
        }
        Ok(Made(out))
    })
}
