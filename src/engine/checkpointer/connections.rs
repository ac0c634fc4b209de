//! The checkpoint thread's own connections (part of `checkpointer`): how they are opened,
//! the busy handler its checkpoint connection waits in, and a read begun on one of them.

use std::cell::Cell;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::{BUSY_POLL, SIDE_BUSY};
use crate::error::SResult;

pub(super) fn open_side(path: &str) -> SResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    // Small caches: the thread reads page 1 and the WAL's frames, nothing else.
    conn.execute_batch("PRAGMA cache_size = -64")?;
    conn.busy_timeout(SIDE_BUSY)?;
    Ok(conn)
}

thread_local! {
    /// The checkpoint connection's busy handler: how long it waits in all (a checkpoint's
    /// waits for the write lock and for readers add up), and since when.
    pub(super) static BUSY_LIMIT: Cell<Duration> = const { Cell::new(SIDE_BUSY) };
    pub(super) static BUSY_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Polls every [`BUSY_POLL`] within [`BUSY_LIMIT`], so that a restart waiting for
/// readers (the writes wait with it) ends as soon as they let go, rather than at the
/// next of SQLite's default busy handler's growing sleeps (up to 100 ms apart).
pub(super) fn on_busy(_count: i32) -> bool {
    let now = Instant::now();
    let since = BUSY_SINCE.with(|s| {
        let since = s.get().unwrap_or(now);
        s.set(Some(since));
        since
    });
    let waited = now - since;
    let limit = BUSY_LIMIT.with(Cell::get);
    if waited >= limit {
        return false;
    }
    std::thread::sleep(BUSY_POLL.min(limit - waited));
    true
}

/// Opens a read transaction on `conn` (its snapshot taken); false, with none left open,
/// when it could not.
pub(super) fn begin_read(conn: &Connection) -> bool {
    let began = conn.execute_batch("BEGIN").is_ok()
        && conn
            .query_row("SELECT 1 FROM sqlite_schema LIMIT 1", [], |_| Ok(()))
            .optional()
            .is_ok();
    if !began {
        let _ = conn.execute_batch("ROLLBACK");
    }
    began
}
