//! `Database`'s methods that are not statements: exec, pragma and the transactions of
//! `db.transaction(fn)`, which open in one native call and end in another with the
//! caller's function in between (the same guard as the store's, detached meanwhile).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::connection::with_handle;
use crate::engine::js::protocol::{RowMode, TxKind};
use crate::engine::js::value::JsVal;
use crate::engine::rows::{all_rows, first_row, Read};
use crate::engine::transaction::{Behavior, Level, Tx};
use crate::ffi::napi::returned::Returned;

use super::prepare::{exec_script, prepare_one};
use super::verbose::{log_stmt, log_text};
use super::{no_iterators_unless_unsafe, statements};
use crate::engine::connection::Core;
use crate::error::SResult;
use crate::ffi::napi::Napi;

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
    with_handle(&env, db, |core| exec_script(Napi::new(env.raw()), core, &source))
}

/// `db.pragma(source, { simple })`: the first row's first value (undefined without a
/// row), or every row as objects; `safe_integers` when the database's statements read
/// INTEGER values as BigInt (better-sqlite3 runs the pragma as such a statement).
#[napi]
pub fn facade_pragma(env: Env, db: u32, source: JsVal, simple: bool, safe_integers: bool) -> Result<Returned> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let (mut stmt, _) = prepare_one(core, &source, true)?;
        // Busy while it runs: its logger, or a user function it calls, cannot use the connection.
        let _busy = statements(core)?;
        log_stmt(js, core, &stmt)?;
        let mut layout = None;
        if !simple {
            let read = Read::plain(RowMode::Flat, safe_integers);
            return Ok(Returned(all_rows(js, &core.conn, &mut stmt, &mut layout, read)?));
        }
        let read = Read::plain(RowMode::Pluck, safe_integers);
        Ok(Returned(first_row(js, &core.conn, &mut stmt, &mut layout, read)?))
    })
}

/// The SQL better-sqlite3's transaction functions run (what its logger sees).
const SAVEPOINT: &[u8] = b"SAVEPOINT `\t_bs3.\t`";
const RELEASE: &[u8] = b"RELEASE `\t_bs3.\t`";
const ROLLBACK_TO: &[u8] = b"ROLLBACK TO `\t_bs3.\t`";

fn begin_text(kind: u32) -> &'static [u8] {
    match kind {
        1 => b"BEGIN DEFERRED",
        2 => b"BEGIN IMMEDIATE",
        3 => b"BEGIN EXCLUSIVE",
        _ => b"BEGIN",
    }
}

/// A transaction step as better-sqlite3 runs it with `stmt.run()`: refused while
/// iterating (unless unsafe), logged first, the connection busy meanwhile.
fn tx_step<T>(js: Napi, core: &Core, logged: &[&[u8]], f: impl FnOnce() -> SResult<T>) -> SResult<T> {
    no_iterators_unless_unsafe(core)?;
    let _busy = statements(core)?;
    for sql in logged {
        log_text(js, core, sql)?;
    }
    f()
}

/// Opens a transaction for `db.transaction(fn)`, or a savepoint when one is already
/// open. Returns whether it was a savepoint (handed back to commit/rollback).
#[napi]
pub fn tx_begin(env: Env, db: u32, mode: u32) -> Result<bool> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let text = if core.conn.is_autocommit() {
            begin_text(mode)
        } else {
            SAVEPOINT
        };
        tx_step(js, core, &[text], || {
            let tx = Tx::begin(core, behavior(mode))?;
            Ok(tx.detach() == Level::Savepoint)
        })
    })
}

/// Commits (or releases the savepoint of) a `db.transaction(fn)` call.
#[napi]
pub fn tx_commit(env: Env, db: u32, savepoint: bool) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        let text: &[u8] = if savepoint { RELEASE } else { b"COMMIT" };
        tx_step(js, core, &[text], || {
            Tx::resume(core, level(savepoint)).commit_or_detach()
        })?;
        if !savepoint {
            core.companions.after_commit(core);
        }
        Ok(())
    })
}

/// Undoes a `db.transaction(fn)` call after a throw, if SQLite still has it open.
#[napi]
pub fn tx_rollback(env: Env, db: u32, savepoint: bool) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        if core.conn.is_autocommit() {
            return Ok(());
        }
        let logged: &[&[u8]] = if savepoint {
            &[ROLLBACK_TO, RELEASE]
        } else {
            &[b"ROLLBACK"]
        };
        tx_step(js, core, logged, || Tx::resume(core, level(savepoint)).rollback())
    })
}
