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

use rusqlite::Connection;

use crate::sqlite::error::SResult;

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
