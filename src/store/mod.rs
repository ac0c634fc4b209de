//! The hub's store methods, one file per area, as `#[napi] impl NativeDb` blocks.

pub mod queries;
pub mod uuid7;

mod agents;
mod assign;
mod human;
mod messages;
mod reflexion;
mod role_key;
mod roles;
mod stats;

use rusqlite::Connection;

use crate::sqlite::error::SResult;

/// Prepares (and caches) every statement the store keeps, as the original's createStore
/// did: a schema that lacks a column they use fails here ("no such column: status"), so
/// the hub's store-adapter falls back at start-up instead of failing on a later call.
pub fn prepare_statements(conn: &Connection) -> SResult<()> {
    let areas = [
        agents::STATEMENTS,
        messages::STATEMENTS,
        human::STATEMENTS,
        stats::STATEMENTS,
        assign::STATEMENTS,
        reflexion::STATEMENTS,
        roles::STATEMENTS,
    ];
    for sql in areas.into_iter().flatten() {
        conn.prepare_cached(sql)?;
    }
    Ok(())
}
