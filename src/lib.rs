//! triflux-native-store: the triflux hub store (schemas "6", "7" and "8") as a native addon.
//!
//! Layers, each depending only on the ones listed before it:
//! - `error`: the one failure type every layer returns (no napi, no SQLite calls).
//! - `handles`: the numbered tables JS addresses connections, statements and backups by.
//! - `sqlite`: connection, the one transaction guard, the raw C API behind one safe
//!   module, schema and open-time migration, statement caches, backups. No napi.
//! - `js`: the Node-API boundary: JS values in, better-sqlite3's binding rules, JSON
//!   rows out, throwing errors into JS, the wire protocol with the JS layer.
//! - `native_db`: the napi class that owns one connection, found by handle.
//! - `store`: the hub's statements, one file per area (each in the forms of the schema
//!   versions it serves), and the large-log indexes.
//! - `facade`: `store.db` and `Database`, better-sqlite3 12's API on the same connection.
//!
//! This file only wires them together, the hot statement calls included: they are
//! variadic functions (`js::napi::Variadic`), handed to the JS layer by `nativeFunctions`.

#![deny(clippy::all)]
// The native functions are called from JS only: a test build has no caller for them, so
// everything only they reach would read as unused there. The library build (and clippy)
// still reports dead code.
#![cfg_attr(test, allow(dead_code))]

mod error;
mod facade;
mod handles;
mod js;
mod native_db;
mod sqlite;
mod store;

pub use native_db::NativeDb;

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use js::create::Made;
use js::napi::{Napi, Variadic};

/// The statement calls that take their arguments as passed (`js::napi::Variadic`), and
/// the slots they leave numbers in, by the names `lib/native.cjs` exports them under.
const VARIADIC: [(&CStr, Variadic); 11] = [
    (c"storeRun", store::store_run),
    (c"storeGet", store::store_get),
    (c"storeAll", store::store_all),
    (c"facadeRun", facade::facade_run),
    (c"facadeGet", facade::facade_get),
    (c"facadeAll", facade::facade_all),
    (c"facadeIterNext", facade::facade_iter_next),
    (c"facadeCheck", facade::facade_check),
    (c"resultSlots", js::slots::result_slots),
    (c"facadeStatementTraits", facade::statement_traits),
    (c"facadeIteratorTraits", facade::iterator_traits),
];

/// An object holding the variadic statement calls of this environment.
#[napi]
pub fn native_functions(env: Env) -> Result<Made> {
    let js = Napi::new(env.raw());
    let fail = |_| Error::from_reason("could not create the native statement functions");
    let functions = js.object().map_err(fail)?;
    for (name, f) in VARIADIC {
        js.set_named_property(functions, name, js.variadic_function(name, f).map_err(fail)?)
            .map_err(fail)?;
    }
    Ok(Made(functions))
}
