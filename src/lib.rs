//! triflux-native-store: the triflux hub store (schema "6") as a native addon.
//!
//! Layers, each depending only on the ones listed before it:
//! - `error`: the one failure type every layer returns (no napi, no SQLite calls).
//! - `sqlite`: connection, the one transaction guard, the raw C API behind one safe
//!   module, error codes, schema and open-time migration. No napi.
//! - `js`: JS values with JS's own semantics, better-sqlite3's binding rules, JSON in
//!   and out, V8 helpers, and throwing errors into JS.
//! - `native_db`: the napi class that owns one connection, shared by the two below.
//! - `store`: the hub's methods, one file per area.
//! - `facade`: `store.db` and `Database`, better-sqlite3 12's API on the same connection.
//!
//! This file only wires them together.

#![deny(clippy::all)]
// Native methods take the original's destructured fields as positional arguments (the
// fastest way across the boundary), so several have more than seven parameters.
#![allow(clippy::too_many_arguments)]

mod facade;
mod js;
mod native_db;
mod sqlite;
mod store;

pub use native_db::NativeDb;

use napi_derive::napi;

/// RFC 9562 version-7 UUID, monotonic within the process.
#[napi]
pub fn uuidv7() -> String {
    store::uuid7::next()
}
