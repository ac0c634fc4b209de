//! Opening a connection the way better-sqlite3 does, and the per-connection settings.

use std::time::Duration;

use rusqlite::{ffi, Connection, OpenFlags};

use super::raw;
use crate::error::{SResult, StoreError};

/// `new Database(path, { readonly, fileMustExist, timeout })`.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenMode {
    pub readonly: bool,
    pub file_must_exist: bool,
    /// busy_timeout in milliseconds (better-sqlite3's default is 5000).
    pub timeout_ms: Option<f64>,
}

/// `":memory:"` and `""` are in-memory databases (SQLite's rule).
pub fn is_memory(path: &str) -> bool {
    path == ":memory:" || path.is_empty()
}

/// Opens `path` as a plain file name: URI file names are off in this build
/// (`-USQLITE_USE_URI`, see .cargo/config.toml) and SQLITE_OPEN_URI is never passed, so
/// `file:x.db?mode=ro` names a file, as in better-sqlite3.
pub fn open(path: &str, mode: OpenMode) -> SResult<Connection> {
    // SQLite would silently stop at the NUL and open another file.
    if path.contains('\0') {
        return Err(StoreError::type_error(
            "The database path must not contain NUL characters",
        ));
    }
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if mode.readonly {
        flags |= OpenFlags::SQLITE_OPEN_READ_ONLY;
    } else if mode.file_must_exist {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE;
    } else {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| match e {
        // rusqlite appends ": <path>" to SQLite's message; better-sqlite3 does not.
        rusqlite::Error::SqliteFailure(err, Some(msg)) => {
            let suffix = format!(": {path}");
            let msg = msg.strip_suffix(&suffix).map(str::to_string).unwrap_or(msg);
            StoreError::sqlite(err.extended_code, msg)
        }
        other => StoreError::from(other),
    })?;
    let timeout = mode.timeout_ms.unwrap_or(5000.0);
    // NaN clamps to 0 ms, like better-sqlite3's integer conversion.
    let timeout = if timeout.is_nan() {
        0.0
    } else {
        timeout.clamp(0.0, i32::MAX as f64)
    };
    conn.busy_timeout(Duration::from_millis(timeout as u64))?;
    configure(&conn)?;
    Ok(conn)
}

/// Per-connection settings applied right after opening.
pub fn configure(conn: &Connection) -> SResult<()> {
    conn.set_prepared_statement_cache_capacity(256);
    // better-sqlite3 runs every connection in defensive mode.
    raw::enable_db_config(conn, ffi::SQLITE_DBCONFIG_DEFENSIVE)?;
    // Query-planner stability: with STAT4 compiled in, SQLite otherwise re-prepares
    // (re-parses) a cached statement every time a parameter that meets an indexed
    // column gets a new value. Plans only differ when ANALYZE data exists, and the
    // store's statements are written for their indexes, so stable plans are kept.
    raw::enable_db_config(conn, ffi::SQLITE_DBCONFIG_ENABLE_QPSG)?;
    Ok(())
}
