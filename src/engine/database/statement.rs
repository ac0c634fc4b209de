//! `Statement`'s methods: run, get, all, iterate, bind, columns. Binding follows
//! better-sqlite3's `Binder` (after `sqlite3_clear_bindings`), through the shared rules
//! in `engine::bind`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;

use crate::engine::bind::{
    args_into, args_of, bind_args, bind_in_order, bind_plain, parameter_keys, Arg, Args, Direct,
};
use crate::engine::connection::statement_cache::{HeldStmt, HeldTable};
use crate::engine::connection::{core_of, with_handle, Core};
use crate::engine::js::protocol::mode::{IN_ORDER, SAFE_INTEGERS};
use crate::engine::js::protocol::slot;
use crate::engine::js::protocol::{pack_statement, CallKey, CallKind, RowMode};
use crate::engine::js::result_slots as slots;
use crate::engine::js::value::JsVal;
use crate::engine::rows::{all_rows, current_row, first_row, no_row, Read};
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite as raw;

use super::columns::columns_json;
use super::prepare::prepare_one;
use super::statements;
use super::verbose::log_stmt;
use crate::engine::connection::busy::{idle, iterators_unless_unsafe};

/// better-sqlite3's `Binder::Bind`: the call's arguments onto the statement (cleared
/// again when one fails).
fn bind_params(js: Napi, held: &mut HeldStmt, params: &[Arg<'_>]) -> SResult<()> {
    let bound = bind_args(js, &mut Direct(&mut held.stmt), params, Some(&mut held.named_keys));
    if bound.is_err() {
        held.stmt.clear_bindings();
    }
    bound
}

/// `STATEMENT_START`'s binding part: bind the call's arguments unless `bind()` was used
/// (`mode` says how they come: [`IN_ORDER`]), then hand the statement to the `verbose`
/// logger (bindings cleared if it throws).
#[inline]
fn start(js: Napi, core: &Core, held: &mut HeldStmt, mode: u32, params: &[Raw]) -> SResult<()> {
    if held.bound {
        if !params.is_empty() {
            return Err(already_bound());
        }
    } else {
        let bound = if mode & IN_ORDER != 0 {
            bind_in_order(js, &mut Direct(&mut held.stmt), params)
        } else {
            let plain = if held.stmt.has_named_parameters() {
                None
            } else {
                bind_plain(js, &mut Direct(&mut held.stmt), params)
            };
            plain.unwrap_or_else(|| {
                let mut args = Args::new();
                args_into(js, params, &mut args)
                    .and_then(|()| bind_args(js, &mut Direct(&mut held.stmt), &args, Some(&mut held.named_keys)))
            })
        };
        if bound.is_err() {
            held.stmt.clear_bindings();
            return bound;
        }
    }
    if core.settings.logger.get().is_some() {
        let logged = log_stmt(js, core, &held.stmt);
        if logged.is_err() {
            finish(held);
        }
        return logged;
    }
    Ok(())
}

fn already_bound() -> StoreError {
    StoreError::type_error("This statement already has bound parameters")
}

/// Values the JS layer read from a named-parameter object, one per parameter in order
/// (cleared again when one fails).
fn bind_values_in_order(js: Napi, held: &mut HeldStmt, params: &[Raw]) -> SResult<()> {
    let bound = bind_in_order(js, &mut Direct(&mut held.stmt), params);
    if bound.is_err() {
        held.stmt.clear_bindings();
    }
    bound
}

/// Bindings last one call unless `bind()` made them permanent.
pub(super) fn finish(held: &mut HeldStmt) {
    if !held.bound {
        held.stmt.clear_bindings();
    }
}

/// One statement call on the statement `key` names: the call's parameters bound
/// (`start`), `f` run on the statement, and its bindings finished whatever `f` returned.
/// The argument list stays in this frame (no copy of it per call).
#[inline]
pub(super) fn with_started<T>(
    js: Napi,
    key: CallKey,
    params: &[Raw],
    f: impl FnOnce(&Core, &mut HeldStmt) -> SResult<T>,
) -> Result<T> {
    let env = Env::from_raw(js.env());
    with_handle(&env, key.db, |core| {
        let mut table = statements(core)?;
        let held = idle(&mut table, key.id)?;
        start(js, core, held, key.mode, params)?;
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
        let mut table = statements(core)?;
        let id = table.insert(stmt);
        if !CallKey::fits(db, id) {
            table.remove(id);
            return Err(StoreError::range_error(
                "Too many statements are prepared on this connection",
            ));
        }
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

/// `stmt.run(...params)` as `facadeRun(key, ...params)` (a variadic function; of the
/// key's mode only [`IN_ORDER`] matters, how the parameters come):
/// returns `changes`, and leaves `lastInsertRowid` in the result slots (`js::slots`) as a
/// number and as its 64 bits (read as a BigInt with safe integers): one call, no object
/// built here.
pub fn facade_run(js: Napi, args: &[Raw]) -> Result<Raw> {
    let (key, params) = CallKey::split(js, args)?;
    let env = Env::from_raw(js.env());
    with_handle(&env, key.db, |core| {
        let changes = run_stmt(js, core, key.id, key.mode, params)?;
        let rowid = raw::last_insert_rowid(&core.conn);
        slots::set(js, slot::LAST_ROWID, rowid as f64)?;
        slots::set(js, slot::LAST_ROWID_BITS, f64::from_bits(rowid as u64))?;
        js.number(f64::from(changes))
    })
}

fn run_stmt(js: Napi, core: &Core, id: u32, mode: u32, params: &[Raw]) -> SResult<u32> {
    let mut table = statements(core)?;
    idle(&mut table, id)?;
    iterators_unless_unsafe(core, &table)?;
    let held = table.get(id)?;
    start(js, core, held, mode, params)?;
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

/// How a statement call's mode reads: better-sqlite3's row mode, plus [`SAFE_INTEGERS`]
/// for INTEGER values as BigInt.
pub(super) fn read_of(mode: u32) -> Read<'static> {
    Read::plain(RowMode::from_wire(mode), mode & SAFE_INTEGERS != 0)
}

/// `stmt.get(...params)` as `facadeGet(key, ...params)` (a variadic function):
/// the first row in `mode` (`rows::out::one_row`: a row of one value as that value, its
/// form in the ROW_FORM slot), or `undefined` when there is none.
pub fn facade_get(js: Napi, args: &[Raw]) -> Result<Raw> {
    let (key, params) = CallKey::split(js, args)?;
    let read = read_of(key.mode);
    with_started(js, key, params, |core, held| {
        first_row(js, &core.conn, &mut held.stmt, &mut held.layout, read)
    })
}

/// `stmt.all(...params)` as `facadeAll(key, ...params)` (a variadic function):
/// the rows as an array (`engine::rows`).
pub fn facade_all(js: Napi, args: &[Raw]) -> Result<Raw> {
    let (key, params) = CallKey::split(js, args)?;
    let read = read_of(key.mode);
    with_started(js, key, params, |core, held| {
        all_rows(js, &core.conn, &mut held.stmt, &mut held.layout, read)
    })
}

/// Finalizes a statement whose JS object was collected (no-op once closed or while
/// a call is running: the statement then lives until close).
#[napi]
pub fn facade_finalize(db: u32, id: u32) {
    if let Some(core) = core_of(db) {
        if let Ok(mut table) = core.statements.held.try_borrow_mut() {
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
        bind_params(Napi::new(env.raw()), held, &args_of(&params)?)?;
        held.bound = true;
        Ok(())
    })
}

/// Starts `stmt.iterate(...params)` as `facadeIterStart(key, params)`: binds (the key's
/// mode says how the parameters come, [`IN_ORDER`]) and counts an open iterator.
#[napi]
pub fn facade_iter_start(env: Env, key: JsVal, params: JsVal) -> Result<()> {
    let js = Napi::new(env.raw());
    let key = CallKey::from_js(js, key.raw())?;
    let (id, mode) = (key.id, key.mode);
    with_handle(&env, key.db, |core| {
        let mut table = statements(core)?;
        idle(&mut table, id)?;
        table.may_begin_iteration()?;
        let held = table.get(id)?;
        if held.bound {
            if !args_of(&params)?.is_empty() {
                return Err(already_bound());
            }
        } else if mode & IN_ORDER != 0 {
            let values = (0..params.array_len()?)
                .map(|i| params.element(i).map(|v| v.raw()))
                .collect::<SResult<Vec<Raw>>>()?;
            bind_values_in_order(js, held, &values)?;
        } else {
            bind_params(js, held, &args_of(&params)?)?;
        }
        table.begin_iteration(id)
    })
}

/// `facadeCheck(db, id, kind)`: better-sqlite3's checks before a statement call binds
/// its parameters, in its order (open, not busy, the statement not iterated, no iterator
/// open for a write unless in unsafe mode, room for another iterator), for the JS layer
/// to make before it reads a named-parameter object (a getter there runs after these
/// checks, as in better-sqlite3).
pub fn facade_check(js: Napi, args: &[Raw]) -> Result<Raw> {
    let ([db, id, kind], _) = split_args::<3>(js, args)?;
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        idle(&mut table, id)?;
        match CallKind::from_wire(kind) {
            CallKind::Write => iterators_unless_unsafe(core, &table)?,
            CallKind::Iterate => table.may_begin_iteration()?,
            CallKind::Read => {}
        }
        js.undefined()
    })
}

/// The keys the JS layer reads a named-parameter object by, in parameter order, or null
/// when a parameter has no name (the object then binds here, `engine::bind`).
#[napi]
pub fn facade_parameter_keys(env: Env, db: u32, id: u32) -> Result<Option<Vec<String>>> {
    with_handle(&env, db, |core| Ok(parameter_keys(&*statements(core)?.get(id)?.stmt)))
}

/// One step of an open iterator, logged before its first: true on a row; at the end or
/// on an error the iterator is closed (better-sqlite3's `StatementIterator::Next`).
pub(super) fn iter_step(js: Napi, core: &Core, table: &mut HeldTable, id: u32) -> SResult<bool> {
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
    end_iteration(table, id)?;
    logged?;
    if status == ffi::SQLITE_DONE {
        Ok(false)
    } else {
        Err(raw::last_error(&core.conn))
    }
}

/// An iterator's next row as `facadeIterNext(key)` (a variadic function): as `get()`
/// returns it, or `undefined` at the end (the iterator is then closed).
pub fn facade_iter_next(js: Napi, args: &[Raw]) -> Result<Raw> {
    let (CallKey { db, id, mode }, _) = CallKey::split(js, args)?;
    let env = Env::from_raw(js.env());
    with_handle(&env, db, |core| {
        let mut table = statements(core)?;
        if !iter_step(js, core, &mut table, id)? {
            return no_row(js);
        }
        let held = table.get(id)?;
        match current_row(js, &held.stmt, &mut held.layout, read_of(mode)) {
            Ok(row) => Ok(row),
            Err(error) => {
                // A row that could not be made ends the iteration, as an error stepping does.
                end_iteration(&mut table, id)?;
                Err(error)
            }
        }
    })
}

/// Resets an iterator's statement and stops counting it open.
fn end_iteration(table: &mut HeldTable, id: u32) -> SResult<()> {
    let held = table.get(id)?;
    held.stmt.reset();
    finish(held);
    table.end_iteration(id);
    Ok(())
}

/// Closes an iterator early (`return()` / `break`); a second call changes nothing.
#[napi]
pub fn facade_iter_return(env: Env, db: u32, id: u32) -> Result<()> {
    with_handle(&env, db, |core| end_iteration(&mut *statements(core)?, id))
}

/// `stmt.columns()` as JSON.
#[napi]
pub fn facade_columns(env: Env, db: u32, id: u32) -> Result<String> {
    with_handle(&env, db, |core| Ok(columns_json(&statements(core)?.get(id)?.stmt)))
}
