//! The checkpointer's WAL hook (part of `checkpointer`): after a commit that leaves at
//! least `wal_autocheckpoint` frames in the WAL, the listener is told instead of a
//! checkpoint running on the committing thread. `PRAGMA wal_autocheckpoint` keeps
//! SQLite's behaviour (`steps`): such a statement is prepared and stepped with SQLite's
//! own hook installed at the threshold (so it reads it, and a new value is kept as the
//! threshold), and this hook is put back after.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use rusqlite::Connection;

use crate::error::SResult;
use crate::ffi::sqlite::wal_hook::{self, WalCommitted};
use crate::ffi::sqlite::{Db, RawStmt};

/// What the hook tells, on the connection's own thread (it must be quick).
pub trait WalListener: Send + Sync {
    /// After a commit: the frames now in the WAL and the wal_autocheckpoint threshold
    /// (called only while the threshold is above 0).
    fn committed(&self, frames: c_int, threshold: c_int);
    /// Around a step of an explicit `PRAGMA wal_checkpoint` on the connection: before
    /// (`true`) and after (`false`).
    fn explicit_checkpoint(&self, starting: bool);
    /// The connection's `journal_size_limit`, after a statement that names it was prepared.
    fn journal_size_limit(&self, bytes: i64);
}

/// What a connection's hook holds: the threshold that `PRAGMA wal_autocheckpoint` reads
/// and sets on it, and whom to tell after a commit.
pub(super) struct Hook {
    /// In WAL frames; 0 or less: automatic checkpoints are off (SQLite's meaning).
    threshold: Arc<AtomicI32>,
    listener: Arc<dyn WalListener>,
}

impl WalCommitted for Hook {
    fn committed(&self, frames: c_int) {
        let threshold = self.threshold.load(Ordering::Relaxed);
        if threshold > 0 {
            self.listener.committed(frames, threshold);
        }
    }
}

/// Installs the hook on `conn` (in place of SQLite's automatic checkpoint) until the
/// connection closes; `threshold` is shared with the caller, which may read it from any
/// thread.
pub(super) fn install(conn: &Connection, threshold: Arc<AtomicI32>, listener: Arc<dyn WalListener>) -> SResult<()> {
    wal_hook::install(conn, Arc::new(Hook { threshold, listener }))
}

/// The hook installed on `db`, if any.
fn installed(db: Db<'_>) -> Option<Arc<Hook>> {
    wal_hook::installed::<Hook>(db)
}

/// Runs `f` (a prepare or step of a statement naming wal_autocheckpoint) with SQLite's
/// automatic-checkpoint hook at the threshold in place of this one, when `db` has one;
/// the threshold the statement left is kept.
pub(super) fn with_sqlite_hook<R>(db: Db<'_>, f: impl FnOnce() -> R) -> R {
    let Some(hook) = installed(db) else {
        return f();
    };
    let (result, left) = wal_hook::with_sqlite_autocheckpoint::<Hook, R>(db, hook.threshold.load(Ordering::Relaxed), f);
    hook.threshold.store(left, Ordering::Relaxed);
    result
}

/// Runs `f` (a step of an explicit `PRAGMA wal_checkpoint`) announced to the listener of
/// `db`'s hook, when it has one, before and after.
pub(super) fn announced_checkpoint(db: Db<'_>, f: impl FnOnce() -> c_int) -> c_int {
    let Some(hook) = installed(db) else {
        return f();
    };
    hook.listener.explicit_checkpoint(true);
    let rc = f();
    hook.listener.explicit_checkpoint(false);
    rc
}

/// After a statement naming journal_size_limit was prepared on `conn`: tells its hook's
/// listener, when it has one, the limit now in force.
pub(super) fn tell_journal_size_limit(conn: &Connection, db: Db<'_>) {
    if let Some(hook) = installed(db) {
        if let Some(limit) = journal_size_limit(conn) {
            hook.listener.journal_size_limit(limit);
        }
    }
}

/// The connection's `PRAGMA journal_size_limit`.
pub fn journal_size_limit(conn: &Connection) -> Option<i64> {
    let mut stmt = RawStmt::prepare(conn, b"PRAGMA main.journal_size_limit", false)
        .ok()?
        .stmt?;
    (stmt.step() == rusqlite::ffi::SQLITE_ROW).then(|| match stmt.column(0) {
        rusqlite::types::ValueRef::Integer(n) => n,
        _ => 0,
    })
}
