//! The one module that calls SQLite's C API directly. rusqlite's safe API covers the
//! store's own statements; the better-sqlite3 facade needs what rusqlite does not offer
//! (statements that outlive a borrow of the connection, step-by-step iteration, column
//! metadata, per-connection `db_config` switches, better-sqlite3's exact error texts).
//! Everything here is a safe function or a safe method on [`RawStmt`]; no other file
//! writes `unsafe` against SQLite, except this module's own parts: `functions` (scalar
//! functions, aggregates) and `vtab` (virtual tables) for user callbacks, and `wal_hook`
//! (checkpoints handed to the store's checkpoint thread).

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::bench_floor::recorder as floor;
use crate::engine::callbacks::frames::StepFrame;
use crate::error::StoreError;

pub mod create_function;
pub mod create_module;
mod wal_hook;

pub use crate::engine::checkpointer::gate::{gated, install_restart_gate, is_begin};
use crate::engine::checkpointer::gate::{may_write, through_gate};
use wal_hook::{
    announced_checkpoint, names_autocheckpoint_pragma, pragma_naming, tell_journal_size_limit, with_sqlite_wal_hook,
};
pub use wal_hook::{journal_size_limit, WalHook, WalListener};

/// The connection's raw handle. Valid while the `Connection` lives.
pub(crate) fn db(conn: &Connection) -> *mut ffi::sqlite3 {
    // SAFETY: only used for the C calls below, while `conn` is borrowed.
    unsafe { conn.handle() }
}

fn cstr_lossy<'a>(p: *const c_char) -> Option<Cow<'a, str>> {
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
fn ok_or_last_error(conn: &Connection, rc: c_int) -> Result<(), StoreError> {
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
fn cut_at_nul(bytes: &[u8]) -> Vec<u8> {
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

/// A statement prepared from raw (WTF-8) SQL bytes, finalized on drop. It must be dropped
/// before its connection is closed: the facade's statement table, which owns these, is
/// cleared before `close` (see `native_db`).
pub struct RawStmt {
    handle: *mut ffi::sqlite3_stmt,
    /// A PRAGMA naming wal_autocheckpoint: stepped with SQLite's own WAL hook in place
    /// (see [`WalHook`]), so that it reads and sets what it would without this package's.
    autocheckpoint_pragma: bool,
    /// A PRAGMA naming wal_checkpoint: its steps are announced to the [`WalHook`]'s
    /// listener, which keeps its own checkpoints out of the way meanwhile.
    checkpoint_pragma: bool,
    /// A `BEGIN`: it may take the write lock, so it passes the restart gate.
    begins: bool,
    /// The last step failed only in delivering queued callback calls (its error is
    /// pending in JS): the next reset reports the failure too, as SQLite's would.
    delivery_failed: bool,
}

/// The outcome of preparing the first statement of `sql`.
pub struct Prepared {
    /// None when the text holds only whitespace or comments.
    pub stmt: Option<RawStmt>,
    /// Byte offset of what follows the statement.
    pub tail: usize,
}

/// Column metadata names, as `stmt.columns()` reports them.
pub enum ColumnMeta {
    Name,
    Origin,
    Table,
    Database,
    DeclType,
}

impl RawStmt {
    /// Prepares the first statement of `sql` (which need not be NUL-terminated).
    /// `persistent` hints SQLite that the statement is kept (SQLITE_PREPARE_PERSISTENT).
    pub fn prepare(conn: &Connection, sql: &[u8], persistent: bool) -> Result<Prepared, StoreError> {
        let len = c_int::try_from(sql.len()).map_err(|_| StoreError::range_error("The SQL string is too long"))?;
        let mut handle = std::ptr::null_mut();
        let mut tail: *const c_char = std::ptr::null();
        let flags = if persistent { ffi::SQLITE_PREPARE_PERSISTENT } else { 0 };
        // SAFETY: `sql` outlives the call and its length is passed; `tail` points into it.
        let mut prepare =
            || unsafe { ffi::sqlite3_prepare_v3(db(conn), sql.as_ptr().cast(), len, flags, &mut handle, &mut tail) };
        // SQLite runs `PRAGMA wal_autocheckpoint` and `journal_size_limit` (read or set)
        // while preparing them.
        let rc = if names_autocheckpoint_pragma(sql) {
            with_sqlite_wal_hook(db(conn), prepare)
        } else {
            prepare()
        };
        if rc == ffi::SQLITE_OK && pragma_naming(sql, "journal_size_limit") {
            tell_journal_size_limit(conn);
        }
        if rc != ffi::SQLITE_OK {
            return Err(last_error(conn));
        }
        let tail = if tail.is_null() {
            sql.len()
        } else {
            (tail as usize).saturating_sub(sql.as_ptr() as usize).min(sql.len())
        };
        let stmt = if handle.is_null() {
            None
        } else {
            let text = &sql[..tail];
            Some(RawStmt {
                handle,
                autocheckpoint_pragma: names_autocheckpoint_pragma(text),
                checkpoint_pragma: pragma_naming(text, "wal_checkpoint"),
                begins: is_begin(text),
                delivery_failed: false,
            })
        };
        Ok(Prepared { stmt, tail })
    }

    /// `sqlite3_step`: SQLITE_ROW, SQLITE_DONE or an error code.
    pub fn step(&mut self) -> c_int {
        // SAFETY: `handle` is a live statement owned by self.
        let fresh = unsafe { ffi::sqlite3_stmt_busy(self.handle) } == 0;
        floor::on_step(self.handle as usize, fresh, || self.sql().into_owned());
        // The callbacks this step runs share one frame (and its handle scope).
        let frame = StepFrame::enter(self.readonly());
        let status = self.step_in_frame();
        if frame.finish() {
            return status;
        }
        // A queued call failed: the step fails as if it had failed in place, and the
        // statement is reset as after any failed step (a ROW it produced is dropped).
        self.delivery_failed = true;
        // SAFETY: as above.
        unsafe { ffi::sqlite3_reset(self.handle) };
        ffi::SQLITE_ERROR
    }

    fn step_in_frame(&mut self) -> c_int {
        if self.autocheckpoint_pragma {
            // A step may prepare the statement again (after a schema change).
            // SAFETY: as above.
            let db = unsafe { ffi::sqlite3_db_handle(self.handle) };
            // SAFETY: as above.
            return with_sqlite_wal_hook(db, || unsafe { ffi::sqlite3_step(self.handle) });
        }
        if self.checkpoint_pragma {
            // SAFETY: as above.
            let db = unsafe { ffi::sqlite3_db_handle(self.handle) };
            // SAFETY: as above.
            return announced_checkpoint(db, || unsafe { ffi::sqlite3_step(self.handle) });
        }
        // SAFETY: as above.
        let db = unsafe { ffi::sqlite3_db_handle(self.handle) };
        // SAFETY: as above.
        through_gate(db, may_write(self.handle, self.begins), || unsafe {
            ffi::sqlite3_step(self.handle)
        })
    }

    /// The statement's SQL text as prepared.
    pub fn sql(&self) -> Cow<'_, str> {
        // SAFETY: the text lives as long as the statement, which `&self` borrows.
        let p = unsafe { ffi::sqlite3_sql(self.handle) };
        if p.is_null() {
            Cow::Borrowed("")
        } else {
            // SAFETY: NUL-terminated, owned by the statement.
            unsafe { CStr::from_ptr(p) }.to_string_lossy()
        }
    }

    /// The SQL with its bound values written in (`sqlite3_expanded_sql`), or the plain
    /// text when SQLite cannot expand it: what better-sqlite3 hands its `verbose` logger.
    pub fn expanded_sql(&self) -> Vec<u8> {
        // SAFETY: a fresh sqlite3_malloc'd string or NULL; copied, then freed once.
        let p = unsafe { ffi::sqlite3_expanded_sql(self.handle) };
        if p.is_null() {
            return self.sql().into_owned().into_bytes();
        }
        // SAFETY: NUL-terminated, owned by us until freed below.
        let text = unsafe { CStr::from_ptr(p) }.to_bytes().to_vec();
        // SAFETY: as above.
        unsafe { ffi::sqlite3_free(p.cast()) };
        text
    }

    /// Whether the statement has been stepped and not reset since (`sqlite3_stmt_busy`).
    pub fn is_busy(&self) -> bool {
        // SAFETY: `handle` is a live statement owned by self.
        unsafe { ffi::sqlite3_stmt_busy(self.handle) != 0 }
    }

    /// `sqlite3_reset`: the error of the last step, if any.
    pub fn reset(&mut self) -> c_int {
        // SAFETY: as above.
        let status = unsafe { ffi::sqlite3_reset(self.handle) };
        if std::mem::take(&mut self.delivery_failed) {
            return ffi::SQLITE_ERROR;
        }
        status
    }

    pub fn clear_bindings(&mut self) {
        floor::on_clear(self.handle as usize);
        // SAFETY: as above; sqlite3_clear_bindings always returns SQLITE_OK.
        unsafe { ffi::sqlite3_clear_bindings(self.handle) };
    }

    pub fn readonly(&self) -> bool {
        // SAFETY: as above.
        unsafe { ffi::sqlite3_stmt_readonly(self.handle) != 0 }
    }

    pub fn parameter_count(&self) -> usize {
        // SAFETY: as above.
        let n = unsafe { ffi::sqlite3_bind_parameter_count(self.handle) };
        usize::try_from(n).unwrap_or(0)
    }

    /// The name of parameter `index` (1-based), None for anonymous ones.
    pub fn parameter_name(&self, index: usize) -> Option<&str> {
        let i = c_int::try_from(index).ok()?;
        // SAFETY: the name lives as long as the statement, which `&self` borrows.
        let p = unsafe { ffi::sqlite3_bind_parameter_name(self.handle, i) };
        if p.is_null() {
            None
        } else {
            // SAFETY: NUL-terminated, owned by the statement.
            unsafe { CStr::from_ptr(p) }.to_str().ok()
        }
    }

    /// Binds one value (1-based index); returns SQLite's status.
    pub fn bind(&mut self, index: usize, value: ValueRef<'_>) -> c_int {
        let Ok(i) = c_int::try_from(index) else {
            return ffi::SQLITE_RANGE;
        };
        floor::on_bind(self.handle as usize, index, value);
        // SAFETY: text and blobs are copied by SQLite (SQLITE_TRANSIENT) before returning.
        unsafe {
            match value {
                ValueRef::Null => ffi::sqlite3_bind_null(self.handle, i),
                ValueRef::Integer(n) => ffi::sqlite3_bind_int64(self.handle, i, n),
                ValueRef::Real(f) => ffi::sqlite3_bind_double(self.handle, i, f),
                ValueRef::Text(t) => ffi::sqlite3_bind_text64(
                    self.handle,
                    i,
                    t.as_ptr().cast(),
                    t.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                // An empty blob still needs a non-NULL pointer, or SQLite binds NULL.
                ValueRef::Blob(b) => ffi::sqlite3_bind_blob64(
                    self.handle,
                    i,
                    if b.is_empty() {
                        c"".as_ptr().cast()
                    } else {
                        b.as_ptr().cast()
                    },
                    b.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                ),
            }
        }
    }

    /// How often SQLite prepared this statement again (after a schema change): its
    /// columns may differ from before each time this grows.
    pub fn reprepares(&self) -> i32 {
        // SAFETY: as above.
        unsafe { ffi::sqlite3_stmt_status(self.handle, ffi::SQLITE_STMTSTATUS_REPREPARE, 0) }
    }

    pub fn column_count(&self) -> usize {
        // SAFETY: as above.
        usize::try_from(unsafe { ffi::sqlite3_column_count(self.handle) }).unwrap_or(0)
    }

    /// Column `i` of the current row (valid until the next step or reset).
    pub fn column(&self, i: usize) -> ValueRef<'_> {
        let Ok(i) = c_int::try_from(i) else {
            return ValueRef::Null;
        };
        // SAFETY: called on a row the last step produced; the returned slices borrow
        // `self`, so no step or reset can happen while they live.
        unsafe {
            match ffi::sqlite3_column_type(self.handle, i) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_column_int64(self.handle, i)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_column_double(self.handle, i)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_column_text(self.handle, i);
                    ValueRef::Text(bytes(p, ffi::sqlite3_column_bytes(self.handle, i)))
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_column_blob(self.handle, i).cast::<u8>();
                    ValueRef::Blob(bytes(p, ffi::sqlite3_column_bytes(self.handle, i)))
                }
                _ => ValueRef::Null,
            }
        }
    }

    /// A column's result name or other metadata (None where SQLite has none, e.g. the
    /// table of an expression).
    pub fn column_meta(&self, i: usize, which: ColumnMeta) -> Option<Cow<'_, str>> {
        let i = c_int::try_from(i).ok()?;
        // SAFETY: the strings live until the statement is re-prepared or finalized;
        // `&self` keeps it alive and `cstr_lossy` copies invalid UTF-8.
        let p = unsafe {
            match which {
                ColumnMeta::Name => ffi::sqlite3_column_name(self.handle, i),
                ColumnMeta::Origin => ffi::sqlite3_column_origin_name(self.handle, i),
                ColumnMeta::Table => ffi::sqlite3_column_table_name(self.handle, i),
                ColumnMeta::Database => ffi::sqlite3_column_database_name(self.handle, i),
                ColumnMeta::DeclType => ffi::sqlite3_column_decltype(self.handle, i),
            }
        };
        cstr_lossy(p)
    }
}

impl RawStmt {
    /// A column's result name as the raw bytes SQLite holds (V8 decodes them).
    pub fn column_name_bytes(&self, i: usize) -> &[u8] {
        let Ok(i) = c_int::try_from(i) else {
            return &[];
        };
        // SAFETY: the name lives as long as the statement, which `&self` borrows.
        let p = unsafe { ffi::sqlite3_column_name(self.handle, i) };
        if p.is_null() {
            &[]
        } else {
            // SAFETY: NUL-terminated, owned by the statement.
            unsafe { CStr::from_ptr(p) }.to_bytes()
        }
    }
}

/// SAFETY: `p` points at `n` bytes that SQLite keeps valid until the next step/reset.
unsafe fn bytes<'a>(p: *const u8, n: c_int) -> &'a [u8] {
    match usize::try_from(n) {
        Ok(n) if !p.is_null() && n > 0 => std::slice::from_raw_parts(p, n),
        _ => &[],
    }
}

impl Drop for RawStmt {
    fn drop(&mut self) {
        // SAFETY: the statement is live and finalized exactly once; its connection is
        // still open (the owner drops statements before closing). Finalize's status
        // repeats the last step's error, already reported.
        unsafe { ffi::sqlite3_finalize(self.handle) };
    }
}

/// An online backup (`sqlite3_backup`) into a destination connection it owns, kept
/// across JS calls so that each step is one native call (rusqlite's `Backup` borrows
/// both connections and so cannot outlive one call). Finished on drop, before the
/// destination closes. The SOURCE connection must outlive it: backups live in the
/// source's `Core` and are cleared before its connection closes (see `native_db`).
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
