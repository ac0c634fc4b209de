//! The store connection's WAL: the page size of a new file, its background checkpointer
//! (`sqlite::checkpointer`), and what that checkpointer reports to JS.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::engine::checkpointer::{self, Checkpointer};

use super::state::StoreState;
use crate::engine::connection::{with_handle, Core};
use crate::error::SResult;

/// The page size of a file the store creates. A message insert writes one page per
/// b-tree it touches (the table and each index of `messages`), whole, into the WAL: with
/// 1 KiB pages that is a quarter of the bytes of SQLite's default 4 KiB, for rows that are
/// well under 1 KiB. An existing file keeps its page size.
pub const NEW_FILE_PAGE_SIZE: i64 = 1024;

/// Before the first write to a file: an empty (new) file gets [`NEW_FILE_PAGE_SIZE`].
pub fn before_open(conn: &Connection) -> SResult<()> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    if pages == 0 {
        conn.execute_batch(&format!("PRAGMA page_size = {NEW_FILE_PAGE_SIZE}"))?;
    }
    Ok(())
}

/// After the open-time steps: the checkpointer, for a file in WAL mode. Returns a warning
/// when it could not start (the connection then keeps SQLite's own checkpoints).
pub fn after_open(core: &Core) -> SResult<Option<String>> {
    if core.memory || core.readonly {
        return Ok(None);
    }
    let mode: String = core.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    let Some(path) = core.conn.path().filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if !mode.eq_ignore_ascii_case("wal") {
        return Ok(None);
    }
    match Checkpointer::start(&core.conn, path) {
        Ok(c) => {
            *StoreState::of(core).checkpointer.borrow_mut() = Some(c);
            Ok(None)
        }
        Err(_) => Ok(Some(
            "[store] background checkpoints unavailable: checkpoints run in the writing call".to_string(),
        )),
    }
}

/// What the store's checkpointer has done (`checkpointStatus(store)`).
#[napi(object)]
pub struct CheckpointStatus {
    /// The checkpoint thread runs.
    pub running: bool,
    /// `wal_autocheckpoint` in pages, as `store.db` reads it (0: off).
    pub autocheckpoint: i32,
    pub checkpoints: f64,
    pub restarts: f64,
    /// RESTART checkpoints that readers kept from completing within their wait.
    pub busy: f64,
    /// Checkpoints that failed (a full disk, an I/O error): the WAL kept their frames.
    pub failures: f64,
    pub last_error: Option<String>,
    /// Bytes of WAL frames: the most seen, and at the last checkpoint.
    pub wal_peak_bytes: f64,
    pub wal_frames: f64,
    pub backfilled_frames: f64,
    /// The WAL size from which the thread restarts the WAL (now), and the documented bound.
    pub restart_at_bytes: f64,
    pub bound_bytes: f64,
}

/// The checkpointer's status for connection `db`; null when it has none (an in-memory or
/// read-only file, a `Database`, or a file not in WAL mode).
#[napi]
pub fn checkpoint_status(env: Env, db: u32) -> Result<Option<CheckpointStatus>> {
    with_handle(&env, db, |core| {
        let state = StoreState::of(core);
        let guard = state.checkpointer.borrow();
        let Some(c) = guard.as_ref() else {
            return Ok(None);
        };
        let s = c.status();
        Ok(Some(CheckpointStatus {
            running: s.running,
            autocheckpoint: c.threshold(),
            checkpoints: s.checkpoints as f64,
            restarts: s.restarts as f64,
            busy: s.busy as f64,
            failures: s.failures as f64,
            last_error: s.last_error,
            wal_peak_bytes: s.wal_peak as f64,
            wal_frames: s.wal_frames as f64,
            backfilled_frames: s.backfilled as f64,
            restart_at_bytes: if s.restart_at > 0 {
                s.restart_at
            } else {
                checkpointer::RESTART_AT
            } as f64,
            bound_bytes: checkpointer::BOUND as f64,
        }))
    })
}
