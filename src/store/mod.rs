//! The hub's store methods, one file per area, as `#[napi] impl NativeDb` blocks.

pub mod queries;
pub mod scale;
pub mod uuid7;

mod agents;
mod assign;
mod human;
mod messages;
mod reflexion;
mod role_key;
mod roles;
mod stats;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::native_db::NativeDb;
use crate::sqlite::error::SResult;

/// The clock of the store's timestamps, in Unix milliseconds.
pub fn now() -> i64 {
    uuid7::now_ms()
}

#[napi]
impl NativeDb {
    /// Runs the store's open-time steps: PRAGMAs, `_meta`, schema v6 and migration, the
    /// large-log indexes when due, and every statement prepared. Returns the warnings the
    /// original prints (the glue sends them to console.warn).
    #[napi]
    pub fn open_store(&self, env: Env) -> Result<Vec<String>> {
        self.with(&env, |core| {
            let warnings = crate::sqlite::schema::open_store(&core.conn)?;
            scale::open(core)?;
            prepare_statements(&core.conn)?;
            Ok(warnings)
        })
    }
}

/// Prepares (and caches) every statement the store keeps, as the original's createStore
/// did: a schema that lacks a column they use fails here ("no such column: status"), so
/// the hub's store-adapter falls back at start-up instead of failing on a later call.
pub fn prepare_statements(conn: &Connection) -> SResult<()> {
    // The original's order (agents, roles, messages, ...), so the first error matches.
    let areas = [
        agents::STATEMENTS,
        roles::STATEMENTS,
        messages::STATEMENTS,
        human::STATEMENTS,
        assign::STATEMENTS,
        reflexion::STATEMENTS,
        stats::STATEMENTS,
    ];
    for sql in areas.into_iter().flatten() {
        conn.prepare_cached(sql)?;
    }
    Ok(())
}
