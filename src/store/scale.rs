//! A log that grows for months (issue 10): the large-log indexes and the row counters.
//!
//! * Below [`LARGE_LOG_ROWS`] messages the file keeps the original's schema exactly, and
//!   the per-tick statements run the original's plans (a few milliseconds at most). From
//!   there on, `large_log.sql` replaces four original indexes on `messages` by ones that
//!   serve every per-tick read in O(log n + output); it runs at open, or in the
//!   sweepExpired that first finds the log that large.
//! * `counters.sql` keeps the row counts of `messages` and `dead_letters` in TEMP objects
//!   of this connection; [`counts`] re-runs it (a full recount) whenever another connection
//!   committed (`PRAGMA data_version`) or the schema changed (`PRAGMA schema_version`),
//!   and otherwise reads them in O(1).

use rusqlite::Connection;

use crate::native_db::Core;
use crate::sqlite::error::SResult;
use crate::sqlite::schema::{COUNTERS_SQL, LARGE_LOG_SQL};
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::queries as exec;

/// From this many messages (by the largest rowid, an O(log n) upper bound of the count)
/// the large-log indexes are created.
pub const LARGE_LOG_ROWS: i64 = 10_000;

/// What this connection last saw of the file.
#[derive(Default)]
pub struct ScaleState {
    /// `(data_version, schema_version)` when the counters were last recounted.
    counted: Option<(i64, i64)>,
    /// `schema_version` when `large` was last read from the schema.
    large_seen: Option<i64>,
    /// The large-log indexes exist.
    large: bool,
}

fn pragma_i64(conn: &Connection, sql: &str) -> SResult<i64> {
    exec::count(conn, sql, &[])
}

fn has_large_log_indexes(conn: &Connection) -> SResult<bool> {
    Ok(exec::count(
        conn,
        "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='idx_messages_to_agent_recent'",
        &[],
    )? > 0)
}

/// Creates the large-log indexes once the log is large enough; returns whether it did.
pub fn grow_if_large(core: &mut Core) -> SResult<bool> {
    if large(core)? || pragma_i64(&core.conn, "SELECT COALESCE(MAX(rowid), 0) FROM messages")? < LARGE_LOG_ROWS {
        return Ok(false);
    }
    let conn = &core.conn;
    in_transaction(conn, Behavior::Immediate, || Ok(conn.execute_batch(LARGE_LOG_SQL)?))?;
    core.scale.large_seen = None;
    Ok(true)
}

/// At open, after the original's steps.
pub fn open(core: &mut Core) -> SResult<()> {
    grow_if_large(core)?;
    counts(core)?;
    Ok(())
}

/// Whether the large-log indexes exist (re-read from the schema when it changed).
pub fn large(core: &mut Core) -> SResult<bool> {
    let version = pragma_i64(&core.conn, "PRAGMA schema_version")?;
    if core.scale.large_seen != Some(version) {
        core.scale.large = has_large_log_indexes(&core.conn)?;
        core.scale.large_seen = Some(version);
    }
    Ok(core.scale.large)
}

/// Row counts of `messages` and `dead_letters` (what `SELECT COUNT(*)` gives): O(1) unless
/// another connection committed or the schema changed since the last recount.
pub fn counts(core: &mut Core) -> SResult<(i64, i64)> {
    let conn = &core.conn;
    let versions = (pragma_i64(conn, "PRAGMA data_version")?, pragma_i64(conn, "PRAGMA schema_version")?);
    if core.scale.counted != Some(versions) {
        conn.execute_batch(COUNTERS_SQL)?;
        core.scale.counted = Some(versions);
    }
    Ok((
        exec::count(conn, "SELECT n FROM temp.store_counts WHERE name = 'messages'", &[])?,
        exec::count(conn, "SELECT n FROM temp.store_counts WHERE name = 'dead_letters'", &[])?,
    ))
}
