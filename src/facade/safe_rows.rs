//! Reads with safe integers on (`stmt.safeIntegers()`): every INTEGER is a BigInt, which
//! JSON cannot carry, so these rows are built as JS values here (better-sqlite3's
//! `Data::GetRowJS` with `safe_ints`). A FLAT row is an array of its values, its shape
//! in the ROW_SHAPE result slot, and the JS layer's maker for that shape builds the
//! object, as for the JSON rows (lib/protocol.cjs); when the shape registry is full the
//! keys follow as one more element. The default reads (statement.rs) never come here.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;
use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::bind::{args_into, Args};
use crate::js::create::Made;
use crate::js::napi::{Napi, Raw};
use crate::js::protocol::RowMode;
use crate::js::rows::{RowLayout, RAW};
use crate::js::shapes::split_keys;
use crate::js::slots;
use crate::native_db::{with_handle, Core};
use crate::sqlite::raw::{self, ColumnMeta, RawStmt};
use crate::sqlite::statements::HeldStmt;

use super::statement::{finish, iter_step, start};
use super::statements;

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

/// Puts the shape of a stepped statement's FLAT rows in the ROW_SHAPE slot; returns its
/// keys when the registry is full (they then travel with the rows).
fn flat_shape(js: Napi, held: &mut HeldStmt) -> SResult<Option<Raw>> {
    let reprepares = held.stmt.reprepares();
    let layout;
    let shape = match held.row_shape {
        Some((at, shape)) if at == reprepares => Some(shape),
        _ => {
            layout = RowLayout::new(&held.stmt, &RAW);
            layout.shape_id()
        }
    };
    if let Some(shape) = shape {
        held.row_shape = Some((reprepares, shape));
        slots::set(js, slots::ROW_SHAPE, f64::from(shape))?;
        return Ok(None);
    }
    slots::set(js, slots::ROW_SHAPE, -1.0)?;
    let names: Vec<String> = (0..held.stmt.column_count())
        .map(|i| String::from_utf8_lossy(held.stmt.column_name_bytes(i)).into_owned())
        .collect();
    let joined = names.join("\0");
    let keys = js.array(names.len())?;
    for (i, key) in split_keys(&joined).enumerate() {
        js.set_element(keys, i as u32, js.string_utf8(key.as_bytes())?)?;
    }
    Ok(Some(keys))
}

/// `facadeGet` with safe integers: the row (FLAT: its values) or `undefined`.
pub(super) fn get(js: Napi, db: u32, id: u32, mode: RowMode, params: &[Raw]) -> Result<Raw> {
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut args = Args::new();
        args_into(js, params, &mut args)?;
        let mut table = statements(core)?;
        let held = table.get(id)?;
        start(js, core, held, &args)?;
        let result = get_row(js, core, held, mode);
        held.stmt.reset();
        finish(held);
        result
    })
}

fn get_row(js: Napi, core: &Core, held: &mut HeldStmt, mode: RowMode) -> SResult<Raw> {
    match held.stmt.step() {
        ffi::SQLITE_ROW => {
            let out = row(js, &held.stmt, mode)?;
            if mode == RowMode::Flat {
                if let Some(keys) = flat_shape(js, held)? {
                    let n = held.stmt.column_count() as u32;
                    js.set_element(out, n, keys)?;
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
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut args = Args::new();
        args_into(js, params, &mut args)?;
        let mut table = statements(core)?;
        let held = table.get(id)?;
        start(js, core, held, &args)?;
        let result = all_rows(js, core, held, mode);
        finish(held);
        result
    })
}

fn all_rows(js: Napi, core: &Core, held: &mut HeldStmt, mode: RowMode) -> SResult<Raw> {
    let rows = js.array(0)?;
    let mut count = 0u32;
    let mut keys = None;
    let mut status = held.stmt.step();
    while status == ffi::SQLITE_ROW {
        if count == 0 && mode == RowMode::Flat {
            keys = flat_shape(js, held)?;
        }
        let built = row(js, &held.stmt, mode);
        let built = match built {
            Ok(v) => v,
            Err(e) => {
                held.stmt.reset();
                return Err(e);
            }
        };
        js.set_element(rows, count, built)?;
        count += 1;
        status = held.stmt.step();
    }
    if held.stmt.reset() != ffi::SQLITE_OK || status != ffi::SQLITE_DONE {
        return Err(raw::last_error(&core.conn));
    }
    if let Some(keys) = keys {
        js.set_element(rows, count, keys)?;
    }
    Ok(rows)
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
            if let Some(keys) = flat_shape(js, held)? {
                js.set_element(out, held.stmt.column_count() as u32, keys)?;
            }
        }
        Ok(Made(out))
    })
}
