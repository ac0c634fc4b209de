//! A log that grows for months (issue 10): the large-log indexes and the row counters.
//!
//! * Below [`LARGE_LOG_ROWS`] messages the file keeps the original's schema exactly, and
//!   the per-tick statements run the original's plans (a few milliseconds at most). From
//!   there on, `large_log.sql` replaces four original indexes on `messages` by ones that
//!   serve every per-tick read in O(log n + output); it runs at open, or in the
//!   sweepExpired that first finds the log that large. Which statements run depends on a
//!   flag read at open and by each sweep; both sets give the same results on either set of
//!   indexes, so a flag made stale by another connection only costs speed.
//! * On a large log, `counters.sql` keeps the row counts of `messages` and `dead_letters`
//!   in TEMP objects of this connection (created by the first count). [`stats_row`] reads
//!   them together with `data_version` and `schema_version`, and re-runs the script (a full
//!   recount) when another connection committed or the schema changed since the last
//!   count; otherwise they cost O(1). A small log counts as the original did, and its
//!   inserts pay no trigger.

use rusqlite::Connection;

use crate::native_db::{Core, LogState as ScaleState};
use crate::sqlite::error::SResult;
use crate::sqlite::schema::{COUNTERS_SQL, LARGE_LOG_SQL};
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::queries as exec;

/// From this many messages (by the largest rowid, an O(log n) upper bound of the count)
/// the large-log indexes are created.
pub const LARGE_LOG_ROWS: i64 = 10_000;

/// The leading columns of every [`stats_row`] statement (the counted rows themselves are
/// `(SELECT n FROM temp.store_counts WHERE name = 'messages' | 'dead_letters')`).
pub const VERSIONS: &str =
    "(SELECT data_version FROM pragma_data_version()), (SELECT schema_version FROM pragma_schema_version())";

fn has_large_log_indexes(conn: &Connection) -> SResult<bool> {
    Ok(exec::count(
        conn,
        "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='idx_messages_to_agent_recent'",
        &[],
    )? > 0)
}

/// Creates the large-log indexes once the log is large enough (or notes that another
/// connection did). Called at open and after every sweepExpired.
pub fn grow_if_large(core: &Core) -> SResult<()> {
    let mut state = core.scale.get();
    if state.large {
        return Ok(());
    }
    let conn = &core.conn;
    if has_large_log_indexes(conn)? {
        state.large = true;
    } else if exec::count(conn, "SELECT COALESCE(MAX(rowid), 0) FROM messages", &[])? >= LARGE_LOG_ROWS {
        in_transaction(conn, Behavior::Immediate, || Ok(conn.execute_batch(LARGE_LOG_SQL)?))?;
        state.large = true;
    }
    core.scale.set(state);
    Ok(())
}

/// At open, after the original's steps.
pub fn open(core: &Core) -> SResult<()> {
    grow_if_large(core)?;
    if large(core) {
        stats_row(core, &format!("SELECT {VERSIONS}"))?;
    }
    Ok(())
}

/// Whether the statements written for the large-log indexes should be used.
pub fn large(core: &Core) -> bool {
    core.scale.get().large
}

/// Runs `large_sql` through [`stats_row`] on a large log, else `small_sql` (the same
/// columns, counting as the original did) as it is; returns the columns after the first two.
pub fn stats(core: &Core, large_sql: &str, small_sql: &str) -> SResult<Vec<i64>> {
    if large(core) {
        return stats_row(core, large_sql);
    }
    Ok(exec::int_row(&core.conn, small_sql)?.split_off(2))
}

/// Runs a one-row statement of integer columns whose first two are [`VERSIONS`] and
/// returns the others; recounts first when the versions say the counters may be stale.
/// (A second pass is taken as it is: a commit by another connection in between is as if
/// it had come just after this call.)
pub fn stats_row(core: &Core, sql: &str) -> SResult<Vec<i64>> {
    let mut pass = 0;
    loop {
        let row = match exec::int_row(&core.conn, sql) {
            Ok(row) => row,
            // The TEMP counters are gone (changing `PRAGMA temp_store` empties the temp
            // schema): recreate them, recount, read again.
            Err(_) if pass == 0 => {
                core.conn.execute_batch(COUNTERS_SQL)?;
                core.scale.set(ScaleState {
                    counted: None,
                    ..core.scale.get()
                });
                pass += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let versions = (row[0], row[1]);
        if pass > 0 || core.scale.get().counted == Some(versions) {
            return Ok(row[2..].to_vec());
        }
        core.conn.execute_batch(COUNTERS_SQL)?;
        core.scale.set(ScaleState {
            counted: Some(versions),
            ..core.scale.get()
        });
        pass += 1;
    }
}
