//! An online backup (`sqlite3_backup`) and the copy of a schema's bytes
//! (`sqlite3_serialize`): part of [`super`].

use std::ffi::c_int;

use rusqlite::ffi;
use rusqlite::Connection;

use super::{db, last_error};
use crate::error::StoreError;

/// An online backup (`sqlite3_backup`) into a destination connection it owns, kept
/// across JS calls so that each step is one native call (rusqlite's `Backup` borrows
/// both connections and so cannot outlive one call). Finished on drop, before the
/// destination closes. The SOURCE connection must outlive it: backups live in the
/// source connection's state and are finished before it closes (`engine::backup`).
pub struct RawBackup {
    handle: *mut ffi::sqlite3_backup,
    dest: Option<Connection>,
}

impl RawBackup {
    /// `sqlite3_backup_init(dest, "main", source, source_name)`; on failure the error is
    /// the destination's (better-sqlite3's `ThrowSqliteError(addon, dest_handle)`).
    pub fn init(source: &Connection, source_name: &str, dest: Connection) -> Result<RawBackup, StoreError> {
        let name = std::ffi::CString::new(source_name)
            .map_err(|_| StoreError::type_error("The \"attached\" option must not contain NUL characters"))?;
        // SAFETY: both handles are open; the names are NUL-terminated and outlive the call.
        let handle = unsafe { ffi::sqlite3_backup_init(db(&dest), c"main".as_ptr(), db(source), name.as_ptr()) };
        if handle.is_null() {
            return Err(last_error(&dest));
        }
        Ok(RawBackup {
            handle,
            dest: Some(dest),
        })
    }

    /// `sqlite3_backup_step(pages)`: SQLITE_OK (more to do), SQLITE_DONE or an error code.
    pub fn step(&mut self, pages: c_int) -> c_int {
        // SAFETY: `handle` is live until drop; its source outlives self (see above).
        unsafe { ffi::sqlite3_backup_step(self.handle, pages) }
    }

    /// (`sqlite3_backup_pagecount`, `sqlite3_backup_remaining`) as of the last step.
    pub fn progress(&self) -> (c_int, c_int) {
        // SAFETY: as above.
        unsafe {
            (
                ffi::sqlite3_backup_pagecount(self.handle),
                ffi::sqlite3_backup_remaining(self.handle),
            )
        }
    }
}

impl Drop for RawBackup {
    fn drop(&mut self) {
        // SAFETY: finished exactly once, before the destination connection closes.
        unsafe { ffi::sqlite3_backup_finish(self.handle) };
        drop(self.dest.take());
    }
}
