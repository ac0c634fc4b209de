//! `Database`'s methods that are not statements: exec, pragma and the transactions of
//! `db.transaction(fn)`, which open in one native call and end in another with the
//! caller's function in between (the same guard as the store's, detached meanwhile).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;

use crate::js::json_out::JsonOut;
use crate::js::protocol::{RowMode, TxKind};
use crate::js::value::JsVal;
use crate::native_db::with_handle;
use crate::sqlite::raw;
use crate::sqlite::transaction::{Behavior, Level, Tx};

use super::no_iterators;
use super::prepare::{exec_script, prepare_one};
use super::rows::{all_rows_json, write_row};

fn behavior(kind: u32) -> Behavior {
    match TxKind::from_wire(kind) {
        TxKind::Deferred => Behavior::Deferred,
        TxKind::Immediate => Behavior::Immediate,
        TxKind::Exclusive => Behavior::Exclusive,
    }
}

fn level(savepoint: bool) -> Level {
    if savepoint {
        Level::Savepoint
    } else {
        Level::Outer
    }
}

/// `db.exec(source)`.
#[napi]
pub fn facade_exec(env: Env, db: u32, source: JsVal) -> Result<()> {
    with_handle(&env, db, |core| exec_script(core, &source))
}

/// `db.pragma(source, { simple })`: JSON of `pluck().get()` ("" = undefined) or `all()`.
#[napi]
pub fn facade_pragma(env: Env, db: u32, source: JsVal, simple: bool) -> Result<String> {
    with_handle(&env, db, |core| {
        let (mut stmt, _) = prepare_one(core, &source, true)?;
        // Busy while it runs: a user function it calls cannot use the connection.
        let _running = super::statements(core)?;
        if !simple {
            return all_rows_json(&core.conn, &mut stmt, RowMode::Flat);
        }
        match stmt.step() {
            ffi::SQLITE_ROW => {
                let mut out = JsonOut::new();
                write_row(&mut out, &stmt, RowMode::Pluck);
                Ok(out.finish())
            }
            ffi::SQLITE_DONE => Ok(String::new()),
            _ => {
                stmt.reset();
                Err(raw::last_error(&core.conn))
            }
        }
    })
}

/// Opens a transaction for `db.transaction(fn)`, or a savepoint when one is already
/// open. Returns whether it was a savepoint (handed back to commit/rollback).
#[napi]
pub fn tx_begin(env: Env, db: u32, mode: u32) -> Result<bool> {
    with_handle(&env, db, |core| {
        no_iterators(core)?;
        let tx = Tx::begin(&core.conn, behavior(mode))?;
        Ok(tx.detach() == Level::Savepoint)
    })
}

/// Commits (or releases the savepoint of) a `db.transaction(fn)` call.
#[napi]
pub fn tx_commit(env: Env, db: u32, savepoint: bool) -> Result<()> {
    with_handle(&env, db, |core| {
        no_iterators(core)?;
        Tx::resume(&core.conn, level(savepoint)).commit_or_detach()?;
        if !savepoint {
            crate::store::scale::after_commit(core);
        }
        Ok(())
    })
}

/// Undoes a `db.transaction(fn)` call after a throw, if SQLite still has it open.
#[napi]
pub fn tx_rollback(env: Env, db: u32, savepoint: bool) -> Result<()> {
    with_handle(&env, db, |core| {
        if core.conn.is_autocommit() {
            return Ok(());
        }
        no_iterators(core)?;
        Tx::resume(&core.conn, level(savepoint)).rollback()
    })
}
