//! `Statement`'s methods: run, get, all, iterate, bind, columns. Binding follows
//! better-sqlite3's `Binder` (after `sqlite3_clear_bindings`), through the shared rules
//! in `js::bind`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;

use crate::error::{SResult, StoreError};
use crate::js::bind::{args_of, bind_args_with, bind_raw};
use crate::js::create::Made;
use crate::js::json_out::JsonOut;
use crate::js::napi::Napi;
use crate::js::protocol::pack_statement;
use crate::js::value::JsVal;
use crate::native_db::{core_of, with_handle, Core};
use crate::sqlite::raw;
use crate::sqlite::statements::HeldStmt;

use super::js_rows::{row_js, value_js};
use super::prepare::prepare_one;
use super::rows::{all_rows_json, columns_json, write_row};
use super::{no_iterators, statements, RowMode};

/// better-sqlite3's `Binder::Bind`: the call's arguments onto the statement.
fn bind_params(held: &mut HeldStmt, params: &JsVal) -> SResult<()> {
    let values = bind_args_with(&held.stmt, &args_of(params)?)?;
    bind_raw(&mut held.stmt, &values)
}

/// `STATEMENT_START_LOGIC`'s binding part: bind the call's arguments unless `bind()` was used.
fn start(held: &mut HeldStmt, params: &JsVal) -> SResult<()> {
    if !held.bound {
        bind_params(held, params)
    } else if params.array_len()? > 0 {
        Err(StoreError::type_error("This statement already has bound parameters"))
    } else {
        Ok(())
    }
}

/// Bindings last one call unless `bind()` made them permanent.
fn finish(held: &mut HeldStmt) {
    if !held.bound {
        held.stmt.clear_bindings();
    }
}

/// `db.prepare(source)`: the statement's id and traits packed in one number.
#[napi]
pub fn facade_prepare(env: Env, db: u32, source: JsVal) -> Result<f64> {
    with_handle(&env, db, |core| {
        let (stmt, returns_data) = prepare_one(core, &source, false)?;
        let readonly = stmt.readonly();
        let id = statements(core)?.insert(stmt);
        Ok(pack_statement(id, returns_data, readonly))
    })
}

/// `stmt.run(...params)` on connection `db`: returns `changes`, and writes
/// `lastInsertRowid` into `last_rowid[0]` (a Float64Array): one call, no object built here.
#[napi]
pub fn facade_run(env: Env, db: u32, id: u32, params: JsVal, last_rowid: JsVal) -> Result<u32> {
    with_handle(&env, db, |core| {
        let changes = run_stmt(core, id, &params)?;
        Napi::new(env.raw()).set_float64(last_rowid.raw(), 0, raw::last_insert_rowid(&core.conn) as f64)?;
        Ok(changes)
    })
}

fn run_stmt(core: &Core, id: u32, params: &JsVal) -> SResult<u32> {
    no_iterators(core)?;
    let mut table = statements(core)?;
    let held = table.get(id)?;
    start(held, params)?;
    let before = raw::total_changes(&core.conn);
    held.stmt.step();
    let result = if held.stmt.reset() == ffi::SQLITE_OK {
        // changes() keeps the last write's count; better-sqlite3 reports 0 when this
        // statement changed nothing.
        let changes = if raw::total_changes(&core.conn) == before {
            0
        } else {
            raw::changes(&core.conn)
        };
        Ok(changes as u32)
    } else {
        Err(raw::last_error(&core.conn))
    };
    finish(held);
    result
}

/// `stmt.get(...params)`: a plucked value as itself, a row as an object/array (JSON text
/// for `expand()`), or `undefined` when there is no row.
#[napi]
pub fn facade_get(env: Env, db: u32, id: u32, mode: u32, params: JsVal) -> Result<Made> {
    let js = Napi::new(env.raw());
    let mode = RowMode::from_wire(mode);
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        let held = table.get(id)?;
        start(held, &params)?;
        let result = match held.stmt.step() {
            ffi::SQLITE_ROW => {
                let value = match mode {
                    RowMode::Pluck => value_js(js, &held.stmt, 0),
                    RowMode::Flat | RowMode::Raw => row_js(js, &held.stmt, mode),
                    RowMode::Expand => {
                        let mut out = JsonOut::new();
                        write_row(&mut out, &held.stmt, mode);
                        js.string_utf8(out.finish().as_bytes())
                    }
                };
                held.stmt.reset();
                value
            }
            ffi::SQLITE_DONE => {
                held.stmt.reset();
                js.undefined()
            }
            _ => {
                held.stmt.reset();
                Err(raw::last_error(&core.conn))
            }
        };
        finish(held);
        result.map(Made)
    })
}

/// `stmt.all(...params)` as a JSON array.
#[napi]
pub fn facade_all(env: Env, db: u32, id: u32, mode: u32, params: JsVal) -> Result<String> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        let held = table.get(id)?;
        start(held, &params)?;
        let result = all_rows_json(&core.conn, &mut held.stmt, RowMode::from_wire(mode));
        finish(held);
        result
    })
}

/// Finalizes a statement whose JS object was collected (no-op once closed or while
/// a call is running: the statement then lives until close).
#[napi]
pub fn facade_finalize(db: u32, id: u32) {
    if let Some(core) = core_of(db) {
        if let Ok(mut table) = core.statements.try_borrow_mut() {
            table.remove(id);
        }
    }
}

/// `stmt.bind(...params)`: permanent bindings.
#[napi]
pub fn facade_bind(env: Env, db: u32, id: u32, params: JsVal) -> Result<()> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        let held = table.get(id)?;
        bind_params(held, &params)?;
        held.bound = true;
        Ok(())
    })
}

/// Starts `stmt.iterate(...params)`: binds and counts an open iterator.
#[napi]
pub fn facade_iter_start(env: Env, db: u32, id: u32, params: JsVal) -> Result<()> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        start(table.get(id)?, &params)?;
        table.begin_iteration(id)
    })
}

/// The next row as JSON, or "" at the end (the iterator is then closed).
#[napi]
pub fn facade_iter_next(env: Env, db: u32, id: u32, mode: u32) -> Result<String> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        let held = table.get(id)?;
        let status = held.stmt.step();
        if status == ffi::SQLITE_ROW {
            let mut out = JsonOut::new();
            write_row(&mut out, &held.stmt, RowMode::from_wire(mode));
            return Ok(out.finish());
        }
        held.stmt.reset();
        finish(held);
        table.end_iteration(id);
        if status == ffi::SQLITE_DONE {
            Ok(String::new())
        } else {
            Err(raw::last_error(&core.conn))
        }
    })
}

/// Closes an iterator early (`return()` / `break`); a second call changes nothing.
#[napi]
pub fn facade_iter_return(env: Env, db: u32, id: u32) -> Result<()> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        let held = table.get(id)?;
        held.stmt.reset();
        finish(held);
        table.end_iteration(id);
        Ok(())
    })
}

/// `stmt.columns()` as JSON.
#[napi]
pub fn facade_columns(env: Env, db: u32, id: u32) -> Result<String> {
    with_handle(&env, db, |core| Ok(columns_json(&statements(core)?.get(id)?.stmt)))
}
