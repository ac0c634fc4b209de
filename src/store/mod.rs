//! The hub's store in Rust: the statements of each area (one file per area of the hub),
//! run by name from the JS layer (`lib/store/`), which holds the original's argument
//! handling; the open-time steps; the large-log indexes and counters (`scale`).
//!
//! - `stmt`: the statement type the areas' tables are made of (a leaf).
//! - `statements`: the named statements, their preparation, binding and running.
//! - `query`: the SQL built per call (filters), run on the same statement cache.
//! - `rows`: the shape rows leave in (the original's `parse*Row`).
//! - `wal`: the page size of a new file and the background checkpointer's wiring.
//! - `agents`, `roles`, `messages`, `human`, `assign`, `stats`, `reflexion`: the SQL.

pub mod scale;

mod agents;
mod assign;
mod human;
mod messages;
mod parsed_rows;
mod query;
mod reflexion;
mod roles;
pub mod schema;
mod state;
mod statements;
mod stats;
mod stmt;
mod wal;

pub use statements::{store_all, store_get, store_run};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::connection::with_handle;
use crate::store::schema::SchemaVersion;

/// Runs the open-time steps of the schema `version` store on connection `db`: PRAGMAs,
/// `_meta`, the schema and migration, the large-log indexes when due, and the statements
/// the original prepared at open. Returns the warnings the original prints (the JS layer
/// sends them to console.warn).
#[napi]
pub fn store_open(env: Env, db: u32, version: u32) -> Result<Vec<String>> {
    with_handle(&env, db, |core| {
        let version = SchemaVersion::from_number(version)?;
        wal::before_open(&core.conn)?;
        let mut warnings = crate::store::schema::open_store(&core.conn, version)?;
        scale::open(core)?;
        statements::prepare_at_open(core, version)?;
        warnings.extend(wal::after_open(core)?);
        Ok(warnings)
    })
}

/// RFC 9562 version-7 UUID from the `uuid` crate's shared v7 context: 48 bits of Unix
/// milliseconds and a counter reseeded every millisecond, so every id made in this
/// process sorts after the previous one (as the original's uuidv7 did).
#[napi]
pub fn uuidv7() -> String {
    uuid::Uuid::now_v7().hyphenated().to_string()
}
