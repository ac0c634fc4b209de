//! SQLite's C API, for what rusqlite's safe API does not offer (statements that outlive a
//! borrow of the connection, step-by-step iteration, column metadata, per-connection
//! `db_config` switches, better-sqlite3's exact error texts, callbacks, hooks). Every
//! function here is safe and checks SQLite's status: the connection-level calls in this
//! file, a prepared statement in `statement`, online backups in `online_backup`, user
//! functions and aggregates in `create_function`, virtual tables in `create_module`,
//! values a connection keeps for this package in `client_data`, memory from SQLite's
//! allocator in `sqlite_bytes`, and the WAL hook in `wal_hook`. Nothing here decides a
//! policy: stepping a statement is `sqlite3_step`.

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};
use std::marker::PhantomData;

use rusqlite::ffi;
use rusqlite::Connection;

use crate::error::StoreError;

pub mod client_data;
pub mod create_function;
pub mod create_module;
pub mod online_backup;
pub mod sqlite_bytes;
pub mod statement;
pub mod wal_hook;

pub use online_backup::RawBackup;
pub use statement::{ColumnMeta, RawStmt};

/// A connection as SQLite's calls name it, for as long as the `Connection` or the
/// statement it came from is borrowed.
#[derive(Clone, Copy)]
pub struct Db<'a> {
    handle: *mut ffi::sqlite3,
    _borrowed: PhantomData<&'a ()>,
}

impl Db<'_> {
    /// Whether the connection holds the write lock of "main" (`sqlite3_txn_state`).
    pub fn writing(self) -> bool {
        // SAFETY: `handle` is an open connection for as long as `Db` lives.
        unsafe { ffi::sqlite3_txn_state(self.handle, c"main".as_ptr()) == ffi::SQLITE_TXN_WRITE }
    }
}

/// The connection behind `conn`, for the calls that take a [`Db`].
pub fn db_of(conn: &Connection) -> Db<'_> {
    Db {
        handle: db(conn),
        _borrowed: PhantomData,
    }
}

/// The connection's raw handle. Valid while the `Connection` lives.
fn db(conn: &Connection) -> *mut ffi::sqlite3 {
    // SAFETY: only used for the C calls below, while `conn` is borrowed.
    unsafe { conn.handle() }
}

pub(crate) fn cstr_lossy<'a>(p: *const c_char) -> Option<Cow<'a, str>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: SQLite returns NUL-terminated strings valid until the next call on the
        // same statement; callers copy or use them before that.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy())
    }
}

/// SQLite's English text for a result code (`sqlite3_errstr`).
pub fn errstr(code: i32) -> String {
    // SAFETY: sqlite3_errstr returns a static string or NULL.
    let p = unsafe { ffi::sqlite3_errstr(code) };
    cstr_lossy(p)
        .map(Cow::into_owned)
        .unwrap_or_else(|| format!("SQLite error {code}"))
}

/// better-sqlite3's `ThrowDatabaseError`: the connection's last message and extended code.
pub fn last_error(conn: &Connection) -> StoreError {
    let db = db(conn);
    // SAFETY: `db` is open; errmsg's text is copied at once.
    let (code, msg) = unsafe { (ffi::sqlite3_extended_errcode(db), ffi::sqlite3_errmsg(db)) };
    StoreError::sqlite(code, cstr_lossy(msg).map(Cow::into_owned).unwrap_or_default())
}

/// A registration's status: Ok, or the connection's last error.
pub(crate) fn ok_or_last_error(conn: &Connection, rc: c_int) -> Result<(), StoreError> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(last_error(conn))
    }
}

/// Turns on a boolean `sqlite3_db_config` option (DEFENSIVE, ENABLE_QPSG, ...).
pub fn enable_db_config(conn: &Connection, option: c_int) -> Result<(), StoreError> {
    // SAFETY: boolean options take an int and an optional int* (NULL: no read-back).
    let rc = unsafe { ffi::sqlite3_db_config(db(conn), option, 1 as c_int, std::ptr::null_mut::<c_int>()) };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(StoreError::sqlite(rc, errstr(rc)))
    }
}

/// Sets one of the connection's run-time limits (`sqlite3_limit`).
pub fn set_limit(conn: &Connection, limit: c_int, value: c_int) {
    // SAFETY: a live connection; an unknown limit id is ignored by SQLite.
    unsafe { ffi::sqlite3_limit(db(conn), limit, value) };
}

/// Sets a boolean `sqlite3_db_config` option (DEFENSIVE is turned off by unsafe mode).
pub fn set_db_config(conn: &Connection, option: c_int, on: bool) -> Result<(), StoreError> {
    // SAFETY: boolean options take an int and an optional int* (NULL: no read-back).
    let rc = unsafe { ffi::sqlite3_db_config(db(conn), option, c_int::from(on), std::ptr::null_mut::<c_int>()) };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(StoreError::sqlite(rc, errstr(rc)))
    }
}

/// `sqlite3_deserialize` of a copy of `data` into schema "main", owned and resizable by
/// SQLite (better-sqlite3's `Database::Deserialize`), read-only if asked.
pub fn deserialize(conn: &Connection, data: &[u8], readonly: bool) -> Result<(), StoreError> {
    let len = data.len();
    // SAFETY: a fresh SQLite allocation of `len` bytes (NULL only when out of memory or
    // for 0 bytes); SQLite owns it from the deserialize call on (FREEONCLOSE), even
    // when that call fails.
    let copy = unsafe { ffi::sqlite3_malloc64(len as u64) }.cast::<u8>();
    if len > 0 {
        if copy.is_null() {
            return Err(StoreError::error("Out of memory"));
        }
        // SAFETY: both regions hold `len` bytes and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), copy, len) };
    }
    let mut flags = ffi::SQLITE_DESERIALIZE_FREEONCLOSE | ffi::SQLITE_DESERIALIZE_RESIZEABLE;
    if readonly {
        flags |= ffi::SQLITE_DESERIALIZE_READONLY;
    }
    let size = len as ffi::sqlite3_int64;
    // SAFETY: `copy` holds `size` bytes allocated by sqlite3_malloc64, handed over to SQLite.
    let rc = unsafe { ffi::sqlite3_deserialize(db(conn), c"main".as_ptr(), copy, size, size, flags) };
    match rc {
        ffi::SQLITE_OK => Ok(()),
        ffi::SQLITE_ERROR => Err(StoreError::sqlite(rc, "unable to deserialize database")),
        _ => Err(StoreError::sqlite(rc, errstr(rc))),
    }
}

/// `sqlite3_load_extension(path, entry_point)`: SQLite's own message on failure.
pub fn load_extension(conn: &Connection, path: &[u8], entry_point: Option<&[u8]>) -> Result<(), StoreError> {
    let c_path = std::ffi::CString::new(cut_at_nul(path)).unwrap_or_default();
    let c_entry = entry_point.map(|e| std::ffi::CString::new(cut_at_nul(e)).unwrap_or_default());
    let mut message: *mut c_char = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings that outlive the call; SQLite writes an error
    // message it allocated (freed below) or leaves it NULL.
    let rc = unsafe {
        ffi::sqlite3_load_extension(
            db(conn),
            c_path.as_ptr(),
            c_entry.as_ref().map_or(std::ptr::null(), |e| e.as_ptr()),
            &mut message,
        )
    };
    let text = cstr_lossy(message).map(Cow::into_owned);
    // SAFETY: NULL or a message from sqlite3_mprintf, freed once.
    unsafe { ffi::sqlite3_free(message.cast()) };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(StoreError::sqlite(rc, text.unwrap_or_else(|| errstr(rc))))
    }
}

/// The bytes before the first NUL (what a C string of them holds).
pub(crate) fn cut_at_nul(bytes: &[u8]) -> Vec<u8> {
    bytes.split(|&b| b == 0).next().unwrap_or_default().to_vec()
}

/// Whether SQLite treats `word` as a keyword (`sqlite3_keyword_check`).
pub fn is_keyword(word: &str) -> bool {
    let Ok(len) = c_int::try_from(word.len()) else {
        return false;
    };
    // SAFETY: `word` is valid for `len` bytes; SQLite only reads them.
    unsafe { ffi::sqlite3_keyword_check(word.as_ptr().cast(), len) != 0 }
}

/// `sqlite3_total_changes64`, `sqlite3_changes64` and `sqlite3_last_insert_rowid`.
pub fn total_changes(conn: &Connection) -> i64 {
    // SAFETY: plain reads of connection counters.
    unsafe { ffi::sqlite3_total_changes64(db(conn)) }
}

pub fn changes(conn: &Connection) -> i64 {
    // SAFETY: as above.
    unsafe { ffi::sqlite3_changes64(db(conn)) }
}

pub fn last_insert_rowid(conn: &Connection) -> i64 {
    // SAFETY: as above.
    unsafe { ffi::sqlite3_last_insert_rowid(db(conn)) }
}

/// `sqlite3_db_filename(db, schema)`: the file behind a schema, "" for an in-memory or
/// temporary one, None for no such schema. It reads no page, so a schema SQLite cannot
/// read (a truncated image) still answers.
pub fn db_filename(conn: &Connection, schema: &str) -> Option<String> {
    let name = std::ffi::CString::new(schema).ok()?;
    // SAFETY: the connection is open and `name` NUL-terminated; SQLite returns NULL or a
    // NUL-terminated string it owns, copied here before any other call on the connection.
    let file = unsafe { ffi::sqlite3_db_filename(db(conn), name.as_ptr()) };
    if file.is_null() {
        return None;
    }
    // SAFETY: non-NULL: a NUL-terminated string SQLite keeps while the schema is attached.
    Some(unsafe { std::ffi::CStr::from_ptr(file) }.to_string_lossy().into_owned())
}

/// The main database's data version (`SQLITE_FCNTL_DATA_VERSION`): it changes with every
/// commit to the file, by this connection or any other (seen by this connection at its
/// next read). None if the file control fails.
pub fn data_version(conn: &Connection) -> Option<u32> {
    let mut version: u32 = 0;
    // SAFETY: the file control writes one unsigned int through the pointer it is given.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            db(conn),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_DATA_VERSION,
            (&mut version as *mut u32).cast(),
        )
    };
    (rc == ffi::SQLITE_OK).then_some(version)
}

/// `sqlite3_serialize(db, schema, &size, 0)`: a copy of the schema's bytes, None for a
/// database of no pages, or better-sqlite3's "Out of memory" when SQLite returns no
/// buffer for another reason (an unknown schema, no memory, a schema it cannot read).
pub fn serialize(conn: &Connection, schema: &str) -> Result<Option<Vec<u8>>, StoreError> {
    // V8's `String::Utf8Value` hands better-sqlite3's name to SQLite: it ends at a NUL.
    let name = std::ffi::CString::new(cut_at_nul(schema.as_bytes())).unwrap_or_default();
    let mut size: ffi::sqlite3_int64 = -1;
    // SAFETY: the connection is open and `name` NUL-terminated; flags 0 asks for a fresh
    // sqlite3_malloc'd copy, freed below after copying it.
    let data = unsafe { ffi::sqlite3_serialize(db(conn), name.as_ptr(), &mut size, 0) };
    if data.is_null() {
        // An unknown schema or a failed allocation leave a size; an empty database none.
        return if size == 0 {
            Ok(None)
        } else {
            Err(StoreError::error("Out of memory"))
        };
    }
    let len = usize::try_from(size).unwrap_or(0);
    // SAFETY: SQLite reported `size` bytes at `data`.
    let bytes = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    // SAFETY: `data` came from sqlite3_serialize without SQLITE_SERIALIZE_NOCOPY.
    unsafe { ffi::sqlite3_free(data.cast()) };
    Ok(Some(bytes))
}
