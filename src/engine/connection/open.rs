//! Opening a connection the way better-sqlite3 does, and the per-connection settings.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use napi_derive::napi;

use rusqlite::{ffi, Connection, OpenFlags};

use crate::error::{SResult, StoreError};
use crate::ffi::sqlite as raw;

/// `new Database(path, { readonly, fileMustExist, timeout, immutable })`.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenMode {
    pub readonly: bool,
    pub file_must_exist: bool,
    /// Read the file as it is on disk, without locks, `-wal` or `-shm` (SQLite's
    /// `immutable=1`): for a file the caller may not lock, such as one in a directory it
    /// cannot write. Only with `readonly`.
    pub immutable: bool,
    /// busy_timeout in milliseconds (better-sqlite3's default is 5000).
    pub timeout_ms: Option<f64>,
}

/// `":memory:"` and `""` are in-memory databases (SQLite's rule).
pub fn is_memory(path: &str) -> bool {
    path == ":memory:" || path.is_empty()
}

/// A path holding a NUL is refused: SQLite would silently stop at the NUL and open
/// another file (better-sqlite3 does).
pub fn refuse_nul(path: &str) -> SResult<()> {
    if path.contains('\0') {
        return Err(StoreError::type_error(
            "The database path must not contain NUL characters",
        ));
    }
    Ok(())
}

/// Opens `path` as a plain file name: URI file names are off in this build
/// (`SQLITE_USE_URI=0`, better-sqlite3's defines), so `file:x.db?mode=ro` names a file, as
/// in better-sqlite3. Only an immutable open builds a URI, from the plain name.
pub fn open(path: &str, mode: OpenMode) -> SResult<Connection> {
    refuse_nul(path)?;
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let uri;
    let mut name = path;
    if mode.immutable {
        if !mode.readonly {
            return Err(StoreError::type_error("The \"immutable\" option requires \"readonly\""));
        }
        if is_memory(path) {
            return Err(StoreError::type_error(
                "In-memory/temporary databases cannot be immutable",
            ));
        }
        uri = immutable_uri(path);
        name = &uri;
        flags |= OpenFlags::SQLITE_OPEN_URI;
    }
    if mode.readonly {
        flags |= OpenFlags::SQLITE_OPEN_READ_ONLY;
    } else if mode.file_must_exist {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE;
    } else {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(name, flags).map_err(|e| match e {
        // rusqlite appends ": <path>" to SQLite's message; better-sqlite3 does not.
        rusqlite::Error::SqliteFailure(err, Some(msg)) => {
            let suffix = format!(": {name}");
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

/// A `file:` URI for `path` with `immutable=1`. Every byte but unreserved ones, `/` and
/// `:` is percent-encoded (so `?`, `#` and `%` stay part of the name); an absolute path
/// gets an empty authority (`file:///…`), so one starting with `//` is not read as a host.
fn immutable_uri(path: &str) -> String {
    let path = if cfg!(windows) {
        path.replace('\\', "/")
    } else {
        path.to_string()
    };
    let bytes = path.as_bytes();
    let drive = cfg!(windows) && bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    let mut uri = String::from("file:");
    if path.starts_with('/') {
        uri.push_str("//");
    } else if drive {
        // "C:/x" -> "file:///C:/x" (SQLite's Windows form).
        uri.push_str("///");
    }
    for &byte in bytes {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => uri.push(byte as char),
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The longest JS string and Buffer of the running JS engine, capped at `i32::MAX` (0:
/// not told, SQLite's own limits stay). Process-wide: every JS environment of a process
/// runs the same engine.
static MAX_STRING: AtomicI32 = AtomicI32::new(0);
static MAX_BUFFER: AtomicI32 = AtomicI32::new(0);

/// Takes the JS engine's value limits (the JS layer passes them when the binary loads).
fn store_value_limits(max_string: i32, max_buffer: i32) {
    MAX_STRING.store(max_string, Ordering::Relaxed);
    MAX_BUFFER.store(max_buffer, Ordering::Relaxed);
}

/// Per-connection settings applied right after opening.
pub fn configure(conn: &Connection) -> SResult<()> {
    conn.set_prepared_statement_cache_capacity(256);
    // As better-sqlite3 does: no TEXT or BLOB longer than JS can hold, no SQL text longer
    // than a JS string (SQLite then refuses it with "string or blob too big").
    let (max_string, max_buffer) = (MAX_STRING.load(Ordering::Relaxed), MAX_BUFFER.load(Ordering::Relaxed));
    if max_string > 0 && max_buffer > 0 {
        raw::set_limit(conn, ffi::SQLITE_LIMIT_LENGTH, max_string.min(max_buffer));
        raw::set_limit(conn, ffi::SQLITE_LIMIT_SQL_LENGTH, max_string);
    }
    // better-sqlite3 runs every connection in defensive mode.
    raw::enable_db_config(conn, ffi::SQLITE_DBCONFIG_DEFENSIVE)?;
    // As in better-sqlite3: extensions load through the C API (`db.loadExtension`); SQL's
    // load_extension() function stays off.
    raw::enable_db_config(conn, ffi::SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION)?;
    // Query-planner stability: with STAT4 compiled in, SQLite otherwise re-prepares
    // (re-parses) a cached statement every time a parameter that meets an indexed
    // column gets a new value. Plans only differ when ANALYZE data exists, and the
    // store's statements are written for their indexes, so stable plans are kept.
    raw::enable_db_config(conn, ffi::SQLITE_DBCONFIG_ENABLE_QPSG)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_uri_keeps_the_name_whole() {
        assert_eq!(immutable_uri("hub.db"), "file:hub.db?immutable=1");
        assert_eq!(immutable_uri("/var/lib/hub.db"), "file:///var/lib/hub.db?immutable=1");
        assert_eq!(immutable_uri("//srv/hub.db"), "file:////srv/hub.db?immutable=1");
        assert_eq!(immutable_uri("a b/h?x#1%.db"), "file:a%20b/h%3Fx%231%25.db?immutable=1");
        assert_eq!(immutable_uri("dir/h\u{e9}.db"), "file:dir/h%C3%A9.db?immutable=1");
    }

    #[test]
    fn an_immutable_open_reads_the_file_and_creates_nothing_beside_it() {
        let dir = std::env::temp_dir().join(format!("tfx-immutable-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a b?#.db");
        let path = file.to_str().unwrap();
        let rw = open(path, OpenMode::default()).unwrap();
        rw.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (7);")
            .unwrap();
        drop(rw);
        let before: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let mode = OpenMode {
            readonly: true,
            file_must_exist: true,
            immutable: true,
            timeout_ms: None,
        };
        let ro = open(path, mode).unwrap();
        let x: i64 = ro.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(x, 7);
        let during: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(during, before, "no -wal or -shm beside an immutable open");
        drop(ro);
        let writable = OpenMode {
            immutable: true,
            ..OpenMode::default()
        };
        assert!(open(path, writable).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `native.setValueLimits(maxString, maxBuffer)`: the running JS engine's longest string
/// and Buffer (Node's `buffer.constants`), which every connection opened afterwards
/// limits its values to, as better-sqlite3 does.
#[napi]
pub fn set_value_limits(max_string: f64, max_buffer: f64) {
    let cap = |v: f64| {
        if v.is_nan() {
            0
        } else {
            v.clamp(0.0, f64::from(i32::MAX)) as i32
        }
    };
    store_value_limits(cap(max_string), cap(max_buffer));
}
