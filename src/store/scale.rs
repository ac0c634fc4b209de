//! A log that grows for months: the large-log indexes and the row counters.
//!
//! * Below [`LARGE_LOG_ROWS`] messages the file keeps the original's schema exactly, and
//!   the per-tick statements run the original's plans (a few milliseconds at most). From
//!   there on, `large_log.sql` replaces four original indexes on `messages` by ones that
//!   serve every per-tick read in O(log n + output); it runs at open, or in the
//!   store call that finds the log that large: a message insert whose rowid reaches it,
//!   or a per-tick read that finds the file changed and the log grown (a hub that starts
//!   small converts while it runs, with no restart). Which statements run depends on a
//!   flag kept per connection; both sets give the same results on either set of
//!   indexes, so a flag made stale by another connection only costs speed.
//! * On a large log, `counters.sql` keeps the counts the statistics report (messages,
//!   queued messages by priority class, dead letters, assign jobs by status) in TEMP
//!   objects of this connection (created by the first count). [`stats_row`] reads them in
//!   the same statement as [`FRESH`], and re-runs the script (a full recount, once) when
//!   another connection committed, the schema changed or a write the triggers cannot
//!   follow marked them stale; otherwise they cost O(1). The versions of the last count are
//!   stored beside the counts, so a rolled-back recount takes them back with it. A small
//!   log counts as the original did, and its writes pay no trigger.

use rusqlite::ffi;
use rusqlite::types::ValueRef;

use crate::engine::connection::companions::Companion;
use crate::engine::connection::Core;
use crate::engine::transaction::{in_transaction, Behavior};
use crate::error::{SResult, StoreError};
use crate::ffi::sqlite as raw;
use crate::store::schema::{COUNTERS_SQL, LARGE_LOG_SQL};

use super::query::busy;
use super::state::{LogState, StoreState};

/// From this many messages (by the largest rowid, an O(log n) upper bound of the count)
/// the large-log indexes are created.
pub const LARGE_LOG_ROWS: i64 = 10_000;

/// The first column of every [`stats_row`] statement, which reads the counters' row as
/// `c` (`... FROM temp.store_counts AS c`): 1 when they are current, i.e. no other
/// connection committed and the schema did not change since they were counted (both
/// versions are stored with the counts), and no write marked them stale.
macro_rules! counters_fresh {
    () => {
        "(SELECT data_version FROM pragma_data_version()) IS c.data_version \
AND (SELECT schema_version FROM pragma_schema_version()) IS c.schema_version AND c.stale = 0"
    };
}
pub(crate) use counters_fresh;

/// [`counters_fresh`] as a constant.
pub const FRESH: &str = counters_fresh!();

fn has_large_log_indexes(core: &Core) -> SResult<bool> {
    Ok(count(
        core,
        "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='idx_messages_to_agent_recent'",
    )? > 0)
}

/// Whether any original index that `large_log.sql` drops (its `DROP INDEX IF EXISTS`
/// lines) is in the file.
fn has_replaced_indexes(core: &Core) -> SResult<bool> {
    let present = texts(
        core,
        "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='messages'",
    )?;
    Ok(LARGE_LOG_SQL
        .lines()
        .filter_map(|line| line.strip_prefix("DROP INDEX IF EXISTS "))
        .map(|name| name.trim_end_matches(';'))
        .any(|name| present.iter().any(|p| p == name)))
}

/// Creates the large-log indexes once the log is large enough (or notes that another
/// connection did), and completes a conversion that finds replaced indexes back (an
/// original store re-creates them when it re-applies its schema.sql; every insert would
/// then pay for both sets). At open, where a failure is the open's, and from `adapt`.
fn grow_if_large(core: &Core, store: &StoreState) -> SResult<()> {
    let mut state = store.log.get();
    if state.large {
        return Ok(());
    }
    let conn = &core.conn;
    let converted = has_large_log_indexes(core)?;
    if converted && !has_replaced_indexes(core)? {
        state.large = true;
    } else if converted || count(core, "SELECT COALESCE(MAX(rowid), 0) FROM messages")? >= LARGE_LOG_ROWS {
        in_transaction(core, Behavior::Immediate, || Ok(conn.execute_batch(LARGE_LOG_SQL)?))?;
        state.large = true;
    }
    state.size_checked = raw::data_version(conn);
    store.log.set(state);
    Ok(())
}

/// After the store inserted a message: the rowid it got says whether the log has reached
/// the threshold, so a small log pays one comparison per write.
pub fn after_message_insert(core: &Core) {
    let store = StoreState::of(core);
    if !store.log.get().large && raw::last_insert_rowid(&core.conn) >= LARGE_LOG_ROWS {
        adapt(core, &store);
    }
}

/// After a per-tick read: notices a log that grew through `store.db` or another
/// connection. The read has just seen the file, so its data version is current; the size
/// is looked at once per change of it. The read's result stands as it is (both sets of
/// statements give the same rows).
pub fn after_tick_read(core: &Core) {
    let store = StoreState::of(core);
    let state = store.log.get();
    if state.large || core.readonly {
        return;
    }
    let version = raw::data_version(&core.conn);
    if version.is_some() && version == state.size_checked {
        return;
    }
    adapt(core, &store);
}

/// Converts a log that has grown large from inside a store call. Never within a
/// transaction (a caller's rollback would undo the indexes, and DDL does not belong in
/// their transaction): the commit of `db.transaction(fn)`, or the next call outside
/// one, converts. A failure (another writer
/// held the lock past busy_timeout, a read-only file, a full disk) must not become the
/// error of the call that happened to check: the file keeps its indexes, the call gives
/// its own result, and the next change of the file tries again.
fn adapt(core: &Core, store: &StoreState) {
    if core.readonly {
        return;
    }
    if !core.conn.is_autocommit() {
        store.log.set(LogState {
            convert_after_commit: true,
            ..store.log.get()
        });
        return;
    }
    store.log.set(LogState {
        convert_after_commit: false,
        ..store.log.get()
    });
    if grow_if_large(core, store).is_err() {
        let state = store.log.get();
        store.log.set(LogState {
            size_checked: raw::data_version(&core.conn),
            ..state
        });
    }
}

/// The store's companion is told of commits here: after `db.transaction(fn)` committed,
/// the conversion a store call inside it deferred.
impl Companion for StoreState {
    fn after_commit(&self, core: &Core) {
        let state = self.log.get();
        if state.convert_after_commit && !state.large {
            adapt(core, self);
        }
    }
}

/// At open, after the original's steps.
pub fn open(core: &Core) -> SResult<()> {
    grow_if_large(core, &StoreState::of(core))?;
    if large(core) {
        stats_row(core, &format!("SELECT {FRESH} FROM temp.store_counts AS c"))?;
    }
    Ok(())
}

/// Whether the statements written for the large-log indexes should be used.
pub fn large(core: &Core) -> bool {
    StoreState::of(core).log.get().large
}

/// Runs `large_sql` through [`stats_row`] on a large log, else `small_sql` (the same
/// columns, counting as the original did) as it is; returns the columns after the first.
pub fn stats(core: &Core, large_sql: &str, small_sql: &str) -> SResult<Vec<i64>> {
    if large(core) {
        return stats_row(core, large_sql);
    }
    Ok(int_row(core, small_sql)?.split_off(1))
}

/// Runs a one-row statement of integer columns whose first is [`FRESH`] and returns the
/// others; recounts first when that column says the counters may be stale. (A second
/// pass is taken as it is: a commit by another connection in between is as if it had
/// come just after this call.)
pub fn stats_row(core: &Core, sql: &str) -> SResult<Vec<i64>> {
    // An error here means the TEMP counters are missing: never made on this connection,
    // or gone with the temp schema (changing `PRAGMA temp_store` empties it), or their row
    // was deleted. The script creates what is missing and counts; the read after it
    // reports any other error.
    if let Ok(row) = int_row(core, sql) {
        if row[0] == 1 {
            return Ok(row[1..].to_vec());
        }
    }
    core.conn.execute_batch(COUNTERS_SQL)?;
    Ok(int_row(core, sql)?.split_off(1))
}

/// A single integer (NULL read as 0).
fn count(core: &Core, sql: &str) -> SResult<i64> {
    Ok(int_row(core, sql)?.first().copied().unwrap_or(0))
}

/// The one row of a statement of integer columns (NULL read as 0), kept prepared in the
/// connection's statement cache by its text.
fn int_row(core: &Core, sql: &str) -> SResult<Vec<i64>> {
    rows_of(core, sql, true, |v| match v {
        ValueRef::Integer(n) => n,
        _ => 0,
    })?
    .pop()
    .ok_or_else(|| StoreError::error("Query returned no rows"))
}

/// The first column of every row, as text.
fn texts(core: &Core, sql: &str) -> SResult<Vec<String>> {
    let rows = rows_of(core, sql, false, |v| match v {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => String::new(),
    })?;
    Ok(rows.into_iter().filter_map(|mut row| row.drain(..).next()).collect())
}

/// The rows of `sql` (only the first when `first_only`), each column read by `read`.
fn rows_of<T>(core: &Core, sql: &str, first_only: bool, read: impl Fn(ValueRef<'_>) -> T) -> SResult<Vec<Vec<T>>> {
    let mut kept = core.statements.kept.try_borrow_mut().map_err(|_| busy())?;
    let stmt = &mut kept.by_text(&core.conn, sql)?.stmt;
    let mut rows = Vec::new();
    let mut status = stmt.step();
    while status == ffi::SQLITE_ROW {
        rows.push((0..stmt.column_count()).map(|i| read(stmt.column(i))).collect());
        if first_only {
            break;
        }
        status = stmt.step();
    }
    let reset = stmt.reset();
    if (status != ffi::SQLITE_ROW && status != ffi::SQLITE_DONE)
        || (status == ffi::SQLITE_DONE && reset != ffi::SQLITE_OK)
    {
        return Err(raw::last_error(&core.conn));
    }
    Ok(rows)
}
