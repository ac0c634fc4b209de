//! The store connection's WAL hook (`sqlite3_wal_hook`) in place of SQLite's automatic
//! checkpoint, and the PRAGMAs whose meaning it keeps: part of [`super`], the one module
//! that calls SQLite's C API.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::ffi;
use rusqlite::Connection;

use super::db;

/// The connection's `PRAGMA journal_size_limit`.
pub fn journal_size_limit(conn: &Connection) -> Option<i64> {
    let sql = c"PRAGMA main.journal_size_limit";
    let mut stmt = std::ptr::null_mut();
    // SAFETY: a NUL-terminated statement prepared, stepped once and finalized here.
    unsafe {
        if ffi::sqlite3_prepare_v2(db(conn), sql.as_ptr(), -1, &mut stmt, std::ptr::null_mut()) != ffi::SQLITE_OK {
            return None;
        }
        let value = (ffi::sqlite3_step(stmt) == ffi::SQLITE_ROW).then(|| ffi::sqlite3_column_int64(stmt, 0));
        ffi::sqlite3_finalize(stmt);
        value
    }
}

/// After a statement naming journal_size_limit was prepared on `conn`: tells its hook's
/// listener, when it has one, the limit now in force.
pub(super) fn tell_journal_size_limit(conn: &Connection) {
    if let Some(state) = registered_hook(db(conn)) {
        if let Some(limit) = journal_size_limit(conn) {
            state.listener.journal_size_limit(limit);
        }
    }
}

/// Runs `f` (a step of an explicit `PRAGMA wal_checkpoint`) announced to the listener of
/// `db`'s hook, when it has one, before and after.
pub(super) fn announced_checkpoint(db: *mut ffi::sqlite3, f: impl FnOnce() -> c_int) -> c_int {
    let Some(state) = registered_hook(db) else {
        return f();
    };
    state.listener.explicit_checkpoint(true);
    let rc = f();
    state.listener.explicit_checkpoint(false);
    rc
}

/// Whether `sql` (one statement) is a PRAGMA that names `wal_autocheckpoint`.
pub(super) fn names_autocheckpoint_pragma(sql: &[u8]) -> bool {
    pragma_naming(sql, "wal_autocheckpoint")
}

/// Whether `sql` starts with PRAGMA and contains `name` (lower case).
pub(super) fn pragma_naming(sql: &[u8], name: &str) -> bool {
    let start = sql.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(sql.len());
    sql.len() - start >= 6
        && sql[start..start + 6].eq_ignore_ascii_case(b"pragma")
        && sql.windows(name.len()).any(|w| w.eq_ignore_ascii_case(name.as_bytes()))
}

/// What a [`WalHook`] tells, on the connection's own thread (it must be quick).
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

/// The state a connection's WAL hook points at: the threshold that `PRAGMA
/// wal_autocheckpoint` reads and sets on it, and what to tell after a commit.
struct WalHookState {
    /// In WAL frames; 0 or less: automatic checkpoints are off (SQLite's meaning).
    threshold: Arc<AtomicI32>,
    listener: Arc<dyn WalListener>,
}

/// Connections with a [`WalHook`], by raw handle: how a statement stepped on one finds
/// the hook's state. Only statements that name wal_autocheckpoint look here.
static WAL_HOOKS: Mutex<Vec<(usize, Arc<WalHookState>)>> = Mutex::new(Vec::new());

fn registered_hook(db: *mut ffi::sqlite3) -> Option<Arc<WalHookState>> {
    let hooks = WAL_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    hooks.iter().find(|(h, _)| *h == db as usize).map(|(_, s)| s.clone())
}

unsafe extern "C" fn on_wal_commit(
    arg: *mut c_void,
    _db: *mut ffi::sqlite3,
    _name: *const c_char,
    frames: c_int,
) -> c_int {
    // SAFETY: `arg` is the `WalHookState` the hook was installed with; the hook owns a
    // reference to it until its connection is closed (see `WalHook`).
    let state = unsafe { &*(arg as *const WalHookState) };
    let threshold = state.threshold.load(Ordering::Relaxed);
    if threshold > 0 {
        // A panic must not unwind into SQLite.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            state.listener.committed(frames, threshold)
        }));
    }
    ffi::SQLITE_OK
}

/// A WAL hook (`sqlite3_wal_hook`) in place of SQLite's automatic checkpoint: after a
/// commit that leaves at least `threshold` frames in the WAL, the listener is told
/// instead of a checkpoint running on the committing thread. `PRAGMA wal_autocheckpoint`
/// keeps SQLite's behaviour through [`RawStmt`]: such a statement is stepped with SQLite's
/// own hook installed at the threshold (so it reads it, and a new value is kept as the
/// threshold), and this hook is put back after the step.
///
/// The connection must be closed before this is dropped (its `Core` declares the
/// connection first); dropping forgets the registration.
pub struct WalHook {
    db: usize,
    state: Arc<WalHookState>,
}

impl WalHook {
    /// `threshold` is shared with the caller, which may read it from any thread.
    pub fn install(conn: &Connection, threshold: Arc<AtomicI32>, listener: Arc<dyn WalListener>) -> WalHook {
        let state = Arc::new(WalHookState { threshold, listener });
        let handle = db(conn);
        // SAFETY: the state outlives the hook: the registry and `self` hold it until the
        // connection is closed. The previous hook (SQLite's default) needs no cleanup.
        unsafe { ffi::sqlite3_wal_hook(handle, Some(on_wal_commit), Arc::as_ptr(&state) as *mut c_void) };
        let mut hooks = WAL_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        hooks.retain(|(h, _)| *h != handle as usize);
        hooks.push((handle as usize, state.clone()));
        WalHook {
            db: handle as usize,
            state,
        }
    }

    /// The `wal_autocheckpoint` threshold in frames (0 or less: off).
    pub fn threshold(&self) -> i32 {
        self.state.threshold.load(Ordering::Relaxed)
    }
}

impl Drop for WalHook {
    fn drop(&mut self) {
        let mut hooks = WAL_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        hooks.retain(|(h, s)| !(*h == self.db && Arc::ptr_eq(s, &self.state)));
    }
}

/// Runs `f` (a prepare or step of a statement naming wal_autocheckpoint) with SQLite's
/// automatic-checkpoint hook in place of a [`WalHook`], when `db` has one:
/// `sqlite3_wal_autocheckpoint(threshold)` before; after, the threshold the statement left
/// (the default hook's argument, 0 when it turned it off) is kept and this package's hook
/// reinstalled.
pub(super) fn with_sqlite_wal_hook(db: *mut ffi::sqlite3, f: impl FnOnce() -> c_int) -> c_int {
    let Some(state) = registered_hook(db) else {
        return f();
    };
    // SAFETY: `db` is open; the state stays alive (held by `state`) while reinstalled.
    unsafe { ffi::sqlite3_wal_autocheckpoint(db, state.threshold.load(Ordering::Relaxed)) };
    let rc = f();
    // SAFETY: as above.
    let left = unsafe { ffi::sqlite3_wal_hook(db, Some(on_wal_commit), Arc::as_ptr(&state) as *mut c_void) };
    state.threshold.store(left as usize as i32, Ordering::Relaxed);
    rc
}

#[cfg(test)]
mod tests {
    use super::pragma_naming;

    #[test]
    fn pragmas_are_recognised_by_their_first_word_and_a_name_anywhere() {
        assert!(pragma_naming(b"PRAGMA wal_autocheckpoint", "wal_autocheckpoint"));
        assert!(pragma_naming(
            b"  pragma main.WAL_AUTOCHECKPOINT = 10",
            "wal_autocheckpoint"
        ));
        assert!(pragma_naming(b"\nPRAGMA wal_checkpoint(TRUNCATE)", "wal_checkpoint"));
        assert!(!pragma_naming(b"SELECT 'wal_autocheckpoint'", "wal_autocheckpoint"));
        assert!(!pragma_naming(b"PRAGMA journal_mode", "wal_checkpoint"));
        assert!(!pragma_naming(b"PRAG", "wal_checkpoint"));
    }
}
