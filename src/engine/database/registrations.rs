//! `db.function()`, `db.aggregate()` and `db.table()`: refused while the connection is
//! busy, as better-sqlite3 refuses them, then registered by `callbacks`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::callbacks::functions::{register_aggregate, register_function, AggregateTrampolines};
use crate::engine::callbacks::tables::register_table;
use crate::engine::connection::{with_handle, Core};
use crate::engine::js::value::JsVal;
use crate::error::SResult;
use crate::ffi::napi::Napi;
use crate::ffi::sqlite::create_function::FunctionFlags;

use super::{no_iterators, statements};

/// better-sqlite3 refuses to register while a statement runs or an iterator is open.
fn not_busy(core: &Core) -> SResult<()> {
    drop(statements(core)?);
    no_iterators(core)
}

/// `db.function(name, options, fn)`'s native half: `f` the JS layer's trampoline, `argc`
/// -1 for varargs.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn facade_function(
    env: Env,
    db: u32,
    f: JsVal,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    deterministic: bool,
    direct_only: bool,
) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        not_busy(core)?;
        let flags = FunctionFlags {
            deterministic,
            direct_only,
        };
        register_function(js, &core.conn, db, f, name, argc, safe_ints, flags)
    })
}

/// `db.aggregate(name, options)`'s native half: the JS layer's trampolines (`inverse` a
/// function or null; `run` the three as the queue calls them, `deliver` the thread's
/// delivery of the queue), whether the user gave `result`, `argc` -1 for varargs; a window
/// function when `inverse` is given.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn facade_aggregate(
    env: Env,
    db: u32,
    step: JsVal,
    inverse: JsVal,
    value: JsVal,
    run: JsVal,
    deliver: JsVal,
    has_result: bool,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    deterministic: bool,
    direct_only: bool,
) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        not_busy(core)?;
        let trampolines = AggregateTrampolines {
            step,
            inverse,
            value,
            run,
            deliver,
        };
        let flags = FunctionFlags {
            deterministic,
            direct_only,
        };
        register_aggregate(
            js,
            &core.conn,
            db,
            trampolines,
            has_result,
            name,
            argc,
            safe_ints,
            flags,
        )
    })
}

/// `db.table(name, factory)`'s native half: `eponymous` for a definition object (the
/// table exists under the module's name), else tables come from `CREATE VIRTUAL TABLE`.
#[napi]
pub fn facade_table(env: Env, db: u32, factory: JsVal, name: JsVal, eponymous: bool) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        not_busy(core)?;
        register_table(js, &core.conn, db, factory, name, eponymous)
    })
}
