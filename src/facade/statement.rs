//! `Statement`'s methods: run, get, all, iterate, bind, columns. Binding follows
//! better-sqlite3's `Binder` (after `sqlite3_clear_bindings`), through the shared rules
//! in `js::bind`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;

use crate::error::{SResult, StoreError};
use crate::js::bind::{args_into, args_of, bind_args_into, bind_raw, Arg, Args, BoundValues};
use crate::js::json_out::JsonOut;
use crate::js::napi::{Napi, Raw};
use crate::js::protocol::{pack_statement, SAFE_INTEGERS};
use crate::js::rows::{write_stepped_rows, RowLayout, RAW};
use crate::js::slots;
use crate::js::value::JsVal;
use crate::native_db::{core_of, with_handle, Core};
use crate::sqlite::raw;
use crate::sqlite::statements::{HeldStmt, StatementTable};

use super::busy::{idle, iterators_unless_unsafe};
use super::js_rows::{row_js, value_js};
use super::prepare::prepare_one;
use super::rows::{all_rows_json, columns_json, write_row};
use super::safe_rows;
use super::slotted::slotted_row;
use super::verbose::log_stmt;
use super::{statements, RowMode};

/// better-sqlite3's `Binder::Bind`: the call's arguments onto the statement.
fn bind_params(held: &mut HeldStmt, params: &[Arg<'_>]) -> SResult<()> {
    let mut values = BoundValues::new();
    bind_args_into(&held.stmt, params, &mut values)?;
    bind_raw(&mut held.stmt, &values)
}

/// `STATEMENT_START`'s binding part: bind the call's arguments unless `bind()` was used,
/// then hand the statement to the `verbose` logger (bindings cleared if it throws).
#[inline]
pub(super) fn start(js: Napi, core: &Core, held: &mut HeldStmt, params: &[Arg<'_>]) -> SResult<()> {
    bind_call(held, params)?;
    if core.switches.logger.get().is_some() {
        return log_bound(js, core, held);
    }
    Ok(())
}

/// The logging part of [`start`], out of the way of the calls without a logger.
#[cold]
#[inline(never)]
fn log_bound(js: Napi, core: &Core, held: &mut HeldStmt) -> SResult<()> {
    let logged = log_stmt(js, core, &held.stmt);
    if logged.is_err() {
        finish(held);
    }
    logged
}

fn bind_call(held: &mut HeldStmt, params: &[Arg<'_>]) -> SResult<()> {
    if !held.bound {
        bind_params(held, params)
    } else if !params.is_empty() {
        Err(StoreError::type_error("This statement already has bound parameters"))
    } else {
        Ok(())
    }
}

/// Bindings last one call unless `bind()` made them permanent.
pub(super) fn finish(held: &mut HeldStmt) {
    if !held.bound {
        held.stmt.clear_bindings();
    }
}

/// One statement call on statement `id` of connection `db`: the call's parameters bound
/// (`start`), `f` run on the statement, and its bindings finished whatever `f` returned.
/// The argument list stays in this frame (no copy of it per call).
#[inline]
pub(super) fn with_started<T>(
    js: Napi,
    db: u32,
    id: u32,
    params: &[Raw],
    f: impl FnOnce(&Core, &mut HeldStmt) -> SResult<T>,
) -> Result<T> {
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut args = Args::new();
        args_into(js, params, &mut args)?;
        let mut table = statements(core)?;
        let held = idle(&mut table, id)?;
        start(js, core, held, &args)?;
        let result = f(core, held);
        finish(held);
        result
    })
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

/// The leading arguments of a variadic statement call, then the statement's parameters.
fn split_args<const N: usize>(js: Napi, args: &[Raw]) -> Result<([u32; N], &[Raw])> {
    if args.len() < N {
        return Err(Error::from_reason(
            "a native statement call lacks its leading arguments",
        ));
    }
    let mut lead = [0u32; N];
    for (slot, &arg) in lead.iter_mut().zip(args) {
        *slot = js
            .uint32(arg)
            .map_err(|_| Error::from_reason("a native statement call has a bad leading argument"))?;
    }
    Ok((lead, &args[N..]))
}

/// `stmt.run(...params)` as `facadeRun(db, id, ...params)` (a variadic function): returns
/// `changes`, and leaves `lastInsertRowid` in its result slot (`js::slots`): one call, no
/// object built here.
pub fn facade_run(js: Napi, args: &[Raw]) -> Result<Raw> {
    let ([db, id], params) = split_args::<2>(js, args)?;
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut args = Args::new();
        args_into(js, params, &mut args)?;
        let changes = run_stmt(js, core, id, &args)?;
        slots::set(js, slots::LAST_ROWID, raw::last_insert_rowid(&core.conn) as f64)?;
        js.number(f64::from(changes))
    })
}

fn run_stmt(js: Napi, core: &Core, id: u32, params: &[Arg<'_>]) -> SResult<u32> {
    let mut table = statements(core)?;
    idle(&mut table, id)?;
    iterators_unless_unsafe(core, &table)?;
    let held = table.get(id)?;
    start(js, core, held, params)?;
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

/// `stmt.get(...params)` as `facadeGet(db, id, mode, ...params)` (a variadic function): a
/// plucked value as itself, a row as an array (RAW), as the JSON text of a row object
/// (EXPAND), or for FLAT as a shaped row (`js::rows`: JS builds the object); `undefined`
/// when there is no row. A FLAT row of one column comes back as its value alone, with
/// its shape's number in the ROW_SHAPE result slot (`js::slots`): no JSON is written or
/// parsed for the most common read; otherwise that slot holds -1 and the result is the
/// shaped JSON text (`""` for no row). A mode with SAFE_INTEGERS goes to `safe_rows`.
pub fn facade_get(js: Napi, args: &[Raw]) -> Result<Raw> {
    let ([db, id, mode], params) = split_args::<3>(js, args)?;
    if mode & SAFE_INTEGERS != 0 {
        return safe_rows::get(js, db, id, RowMode::from_wire(mode & !SAFE_INTEGERS), params);
    }
    let mode = RowMode::from_wire(mode);
    with_started(js, db, id, params, |core, held| {
        if mode == RowMode::Flat {
            return flat_row(js, &core.conn, held);
        }
        match held.stmt.step() {
            ffi::SQLITE_ROW => {
                let value = match mode {
                    RowMode::Pluck => value_js(js, &held.stmt, 0),
                    RowMode::Flat | RowMode::Raw => row_js(js, &held.stmt),
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
        }
    })
}

/// The FLAT row of a bound statement for `facade_get` (see there); resets it.
fn flat_row(js: Napi, conn: &rusqlite::Connection, held: &mut HeldStmt) -> SResult<Raw> {
    let status = held.stmt.step();
    if status == ffi::SQLITE_ROW {
        let reprepares = held.stmt.reprepares();
        let shape = match held.row_shape {
            Some((at, shape)) if at == reprepares => Some(shape),
            _ => RowLayout::new(&held.stmt, &RAW).shape_id(),
        };
        if let Some(shape) = shape {
            held.row_shape = Some((reprepares, shape));
            if held.stmt.column_count() == 1 {
                let value = value_js(js, &held.stmt, 0);
                held.stmt.reset();
                slots::set(js, slots::ROW_SHAPE, f64::from(shape))?;
                return value;
            }
            // A row of more columns in the slots (`slotted`), unless it cannot go there.
            if let Some(texts) = slotted_row(js, &held.stmt).transpose() {
                held.stmt.reset();
                let texts = texts?;
                slots::set(js, slots::ROW_SHAPE, -2.0 - f64::from(shape))?;
                return Ok(texts);
            }
        }
    }
    slots::set(js, slots::ROW_SHAPE, -1.0)?;
    let text = write_stepped_rows(conn, &mut held.stmt, &RAW, true, status, &mut None)?;
    js.string_utf8(text.as_bytes())
}

/// `stmt.all(...params)` as `facadeAll(db, id, mode, ...params)` (a variadic function):
/// the rows as JSON (shaped rows for FLAT, `js::rows`).
pub fn facade_all(js: Napi, args: &[Raw]) -> Result<Raw> {
    let ([db, id, mode], params) = split_args::<3>(js, args)?;
    if mode & SAFE_INTEGERS != 0 {
        return safe_rows::all(js, db, id, RowMode::from_wire(mode & !SAFE_INTEGERS), params);
    }
    with_started(js, db, id, params, |core, held| {
        let text = all_rows_json(&core.conn, &mut held.stmt, RowMode::from_wire(mode))?;
        js.string_utf8(text.as_bytes())
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
        let held = idle(&mut table, id)?;
        bind_params(held, &args_of(&params)?)?;
        held.bound = true;
        Ok(())
    })
}

/// Starts `stmt.iterate(...params)`: binds and counts an open iterator.
#[napi]
pub fn facade_iter_start(env: Env, db: u32, id: u32, params: JsVal) -> Result<()> {
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        idle(&mut table, id)?;
        table.may_begin_iteration()?;
        bind_call(table.get(id)?, &args_of(&params)?)?;
        table.begin_iteration(id)
    })
}

/// One step of an open iterator, logged before its first: true on a row; at the end or
/// on an error the iterator is closed (better-sqlite3's `StatementIterator::Next`).
pub(super) fn iter_step(js: Napi, core: &Core, table: &mut StatementTable, id: u32) -> SResult<bool> {
    let held = table.get(id)?;
    let logged = if held.stmt.is_busy() {
        Ok(())
    } else {
        log_stmt(js, core, &held.stmt)
    };
    let status = if logged.is_ok() {
        held.stmt.step()
    } else {
        ffi::SQLITE_ERROR
    };
    if status == ffi::SQLITE_ROW {
        return Ok(true);
    }
    held.stmt.reset();
    finish(held);
    table.end_iteration(id);
    logged?;
    if status == ffi::SQLITE_DONE {
        Ok(false)
    } else {
        Err(raw::last_error(&core.conn))
    }
}

/// The next row as JSON, or "" at the end (the iterator is then closed).
#[napi]
pub fn facade_iter_next(env: Env, db: u32, id: u32, mode: u32) -> Result<String> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        if !iter_step(js, core, &mut table, id)? {
            return Ok(String::new());
        }
        let mut out = JsonOut::new();
        write_row(&mut out, &table.get(id)?.stmt, RowMode::from_wire(mode));
        Ok(out.finish())
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
