//! triflux-native-store: a SQLite engine with better-sqlite3 12's API, and the triflux hub's
//! store (schemas "6", "7" and "8") on top of it, as one native addon.
//!
//! Floors, each depending only on the ones below it (docs/architecture.md):
//! - `error`: the one failure type every floor returns.
//! - `ffi`: Node-API (`ffi::napi`) and SQLite's C API (`ffi::sqlite`), each call a safe
//!   function with its status checked; the only code allowed `unsafe`.
//! - `engine`: better-sqlite3's engine, which knows no hub: connections and their one
//!   statement cache, a statement's step and its stages, binding, rows, transactions,
//!   backups, user callbacks, the checkpointer, the `Database`/`Statement` calls, the
//!   wire with the JS layer. A layer above keeps its state with a connection as a
//!   companion the engine tells of commits.
//! - `store`: the hub's store on the engine: its schemas, migration and SQL, one file per
//!   area, the large-log layout and counters.
//! - `bench_floor`: the benchmarks' floor recorder, in `bench-floor` builds only.
//!
//! This file only wires them together, the hot statement calls included: they are
//! variadic functions (`ffi::napi::Variadic`), handed to the JS layer by `nativeFunctions`.

#![deny(clippy::all)]
// `unsafe` lives in `ffi` alone; everywhere else the compiler refuses it. (`forbid` cannot
// be used: napi-derive's `#[napi]` expansions carry their own `#[allow(unsafe_code)]`.)
#![deny(unsafe_code)]
// The native functions are called from JS only: a test build has no caller for them, so
// everything only they reach would read as unused there. The library build (and clippy)
// still reports dead code.
#![cfg_attr(test, allow(dead_code))]

#[cfg(feature = "bench-floor")]
mod bench_floor;
mod engine;
mod error;
#[allow(unsafe_code)]
mod ffi;
mod store;

pub use engine::connection::NativeDb;

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use ffi::napi::returned::Returned;
use ffi::napi::{Napi, Variadic};

/// The statement calls that take their arguments as passed (`ffi::napi::Variadic`), and
/// the slots they leave numbers in, by the names `lib/native.cjs` exports them under.
const VARIADIC: [(&CStr, Variadic); 11] = [
    (c"storeRun", store::store_run),
    (c"storeGet", store::store_get),
    (c"storeAll", store::store_all),
    (c"facadeRun", engine::database::facade_run),
    (c"facadeGet", engine::database::facade_get),
    (c"facadeAll", engine::database::facade_all),
    (c"facadeIterNext", engine::database::facade_iter_next),
    (c"facadeCheck", engine::database::facade_check),
    (c"resultSlots", engine::js::result_slots::result_slots),
    (c"facadeStatementTraits", engine::database::statement_traits),
    (c"facadeIteratorTraits", engine::database::iterator_traits),
];

/// An object holding the variadic statement calls of this environment.
#[napi]
pub fn native_functions(env: Env) -> Result<Returned> {
    let js = Napi::new(env.raw());
    let fail = |_| Error::from_reason("could not create the native statement functions");
    let functions = js.object().map_err(fail)?;
    for (name, f) in VARIADIC {
        js.set_named_property(functions, name, js.variadic_function(name, f).map_err(fail)?)
            .map_err(fail)?;
    }
    Ok(Returned(functions))
}
