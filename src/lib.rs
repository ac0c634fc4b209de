//! triflux-native-store: the triflux hub store (schema "6") as a native addon.
//! This file only wires the modules together; each concern lives in its own module.

#![deny(clippy::all)]
// Native methods take the original's destructured fields as positional arguments (the
// fastest way across the boundary), so several have more than seven parameters.
#![allow(clippy::too_many_arguments)]

mod bind;
mod db;
mod errclass;
mod errors;
mod exec;
mod facade;
mod jscalc;
mod jsval;
mod rowjson;
mod schema;
mod uuid7;
mod v8json;

mod agents;
mod messages;
mod human;
mod stats;

// Assign jobs and reflexion memory.
mod assign;
mod reflexion;

// Role registry.
mod rolekey;
mod roles;

pub use db::NativeDb;

use napi_derive::napi;

/// RFC 9562 version-7 UUID, monotonic within the process.
#[napi]
pub fn uuidv7() -> String {
    uuid7::next()
}
