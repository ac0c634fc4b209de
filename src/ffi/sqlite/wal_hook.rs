//! A connection's WAL hook (`sqlite3_wal_hook`), told of every commit in place of SQLite's
//! automatic checkpoint: part of [`super`]. The hook's target is kept by the connection
//! ([`super::client_data`]), so it lives exactly as long as the connection may call it.

use std::any::Any;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

use rusqlite::ffi;
use rusqlite::Connection;

use super::{client_data, db, Db};
use crate::error::StoreError;

/// The name the hook's target is kept under in its connection.
const NAME: &CStr = c"triflux-native-store.wal-hook";

/// What a WAL hook calls after each commit, on the committing thread (it must be quick).
pub trait WalCommitted: Any + Send + Sync {
    /// The frames now in the WAL.
    fn committed(&self, frames: c_int);
}

unsafe extern "C" fn on_wal_commit<T: WalCommitted>(
    arg: *mut c_void,
    _db: *mut ffi::sqlite3,
    _name: *const c_char,
    frames: c_int,
) -> c_int {
    // SAFETY: `arg` is the `T` that `install` keeps with the connection, alive until it
    // closes, after which SQLite calls no hook.
    let target = unsafe { &*(arg as *const T) };
    // A panic must not unwind into SQLite.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.committed(frames)));
    ffi::SQLITE_OK
}

/// Installs `target` as `conn`'s WAL hook (SQLite's automatic checkpoint is off from then
/// on), kept with the connection until it closes.
pub fn install<T: WalCommitted>(conn: &Connection, target: Arc<T>) -> Result<(), StoreError> {
    let p = Arc::as_ptr(&target) as *mut c_void;
    client_data::set(conn, NAME, target)?;
    // SAFETY: the connection keeps the target alive (above) until it closes. The hook
    // this replaces (SQLite's default or an earlier target) needs no cleanup.
    unsafe { ffi::sqlite3_wal_hook(db(conn), Some(on_wal_commit::<T>), p) };
    Ok(())
}

/// The target installed on `db`, if it is a `T`.
pub fn installed<T: WalCommitted>(db: Db<'_>) -> Option<Arc<T>> {
    client_data::get::<T>(db, NAME)
}

/// Runs `f` with SQLite's automatic checkpoint at `threshold` frames as `db`'s WAL hook
/// (`sqlite3_wal_autocheckpoint`), then puts the installed `T` back. Returns `f`'s result
/// and the threshold SQLite's hook was left at (0 when `f` turned it off). Without an
/// installed `T`, `f` runs as it is (and the threshold returned is `threshold`).
pub fn with_sqlite_autocheckpoint<T: WalCommitted, R>(
    db: Db<'_>,
    threshold: c_int,
    f: impl FnOnce() -> R,
) -> (R, c_int) {
    let Some(target) = installed::<T>(db) else {
        return (f(), threshold);
    };
    // SAFETY: `db` is open while borrowed.
    unsafe { ffi::sqlite3_wal_autocheckpoint(db.handle, threshold) };
    let result = f();
    // SAFETY: as above; the connection keeps `target` alive until it closes. The
    // previous hook's argument is SQLite's own threshold (a number, not a pointer).
    let left =
        unsafe { ffi::sqlite3_wal_hook(db.handle, Some(on_wal_commit::<T>), Arc::as_ptr(&target) as *mut c_void) };
    (result, left as usize as c_int)
}
