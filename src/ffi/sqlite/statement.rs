//! A prepared statement (`sqlite3_stmt`): part of [`super`]. Stepping it is
//! `sqlite3_step` alone; what else runs around a step (user callbacks' frames, the
//! checkpointer's gate) is the engine's (`engine::statement`).

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::{cstr_lossy, db, last_error, Db};
use crate::error::StoreError;

/// A statement prepared from raw (WTF-8) SQL bytes, finalized on drop. It must be dropped
/// before its connection is closed: a connection's statements are finalized before it
/// closes (`engine::connection`).
pub struct RawStmt {
    handle: *mut ffi::sqlite3_stmt,
    /// TEXT that SQLite reads in place ([`RawStmt::bind_text_kept`]), by parameter index:
    /// each kept until its parameter is bound again, the bindings are cleared or the
    /// statement is finalized, whichever comes first.
    kept: Vec<(c_int, Vec<u8>)>,
}

/// The outcome of preparing the first statement of `sql`.
pub struct RawPrepared {
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
    pub fn prepare(conn: &Connection, sql: &[u8], persistent: bool) -> Result<RawPrepared, StoreError> {
        let len = c_int::try_from(sql.len()).map_err(|_| StoreError::range_error("The SQL string is too long"))?;
        let mut handle = std::ptr::null_mut();
        let mut tail: *const c_char = std::ptr::null();
        let flags = if persistent { ffi::SQLITE_PREPARE_PERSISTENT } else { 0 };
        // SAFETY: `sql` outlives the call and its length is passed; `tail` points into it.
        let rc = unsafe { ffi::sqlite3_prepare_v3(db(conn), sql.as_ptr().cast(), len, flags, &mut handle, &mut tail) };
        if rc != ffi::SQLITE_OK {
            return Err(last_error(conn));
        }
        let tail = if tail.is_null() {
            sql.len()
        } else {
            (tail as usize).saturating_sub(sql.as_ptr() as usize).min(sql.len())
        };
        let stmt = (!handle.is_null()).then_some(RawStmt {
            handle,
            kept: Vec::new(),
        });
        Ok(RawPrepared { stmt, tail })
    }

    /// `sqlite3_step`: SQLITE_ROW, SQLITE_DONE or an error code.
    pub fn step(&mut self) -> c_int {
        // SAFETY: `handle` is a live statement owned by self.
        unsafe { ffi::sqlite3_step(self.handle) }
    }

    /// Runs `f` with the statement's connection and the statement itself (a step that
    /// something about the connection decides around).
    pub fn with_db<R>(&mut self, f: impl FnOnce(Db<'_>, &mut RawStmt) -> R) -> R {
        let db = Db {
            // SAFETY: as above; the connection outlives its statements.
            handle: unsafe { ffi::sqlite3_db_handle(self.handle) },
            _borrowed: std::marker::PhantomData,
        };
        f(db, self)
    }

    /// The statement's address: its identity while it lives (for the statement observer
    /// of the `bench-floor` feature).
    #[cfg(feature = "bench-floor")]
    pub fn id(&self) -> usize {
        self.handle as usize
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
        unsafe { ffi::sqlite3_reset(self.handle) }
    }

    pub fn clear_bindings(&mut self) {
        // A statement of no parameters has none to clear (SQLite would only take its mutex).
        if self.parameter_count() == 0 {
            return;
        }
        // SAFETY: as above; sqlite3_clear_bindings always returns SQLITE_OK.
        unsafe { ffi::sqlite3_clear_bindings(self.handle) };
        // Every parameter is NULL now: no kept text is read any more.
        self.kept.clear();
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
        // SAFETY: text and blobs are copied by SQLite (SQLITE_TRANSIENT) before returning.
        let rc = unsafe {
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
                    crate::ffi::bytes_ptr(b),
                    b.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                ),
            }
        };
        if rc == ffi::SQLITE_OK {
            self.release_kept(i);
        }
        rc
    }

    /// Binds TEXT (1-based index) that the statement keeps, so SQLite reads it in place
    /// (SQLITE_STATIC) instead of copying it: for long text, one copy and one allocation
    /// fewer. Returns SQLite's status.
    pub fn bind_text_kept(&mut self, index: usize, text: Vec<u8>) -> c_int {
        let Ok(i) = c_int::try_from(index) else {
            return ffi::SQLITE_RANGE;
        };
        if text.is_empty() {
            return self.bind(index, ValueRef::Text(&text));
        }
        // SAFETY: SQLite reads the bytes until the parameter is bound again, the bindings
        // are cleared or the statement is finalized. `kept` owns them until then: an
        // earlier text of this parameter is released only once SQLite took the new value,
        // `clear_bindings` releases them after SQLite cleared, and `kept` drops after
        // `drop` finalized. A Vec's heap bytes stay where they are when the Vec moves.
        let rc = unsafe {
            ffi::sqlite3_bind_text64(
                self.handle,
                i,
                text.as_ptr().cast(),
                text.len() as u64,
                ffi::SQLITE_STATIC(),
                ffi::SQLITE_UTF8 as u8,
            )
        };
        if rc == ffi::SQLITE_OK {
            self.release_kept(i);
            self.kept.push((i, text));
        }
        rc
    }

    /// Drops the kept text of parameter `i`, which SQLite no longer reads.
    fn release_kept(&mut self, i: c_int) {
        if !self.kept.is_empty() {
            self.kept.retain(|(at, _)| *at != i);
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
        // One column access, then the value's own accessors: each `sqlite3_column_*` call
        // would enter and leave the connection's mutex and check for a failed allocation
        // again. The connections are opened with SQLITE_OPEN_NOMUTEX, where SQLite makes
        // no difference between the protected and unprotected values the accessors take.
        // SAFETY: called on a row the last step produced; the returned slices borrow
        // `self`, so no step or reset can happen while they live.
        unsafe { value_ref(ffi::sqlite3_column_value(self.handle, i)) }
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

/// A SQLite value as its type and contents (a result column's or a callback's argument).
///
/// # Safety
/// `v` is a live value whose text and blob pointers SQLite keeps valid for as long as the
/// returned slices live.
#[inline]
pub(super) unsafe fn value_ref<'a>(v: *mut ffi::sqlite3_value) -> ValueRef<'a> {
    // SAFETY: the caller's promise.
    unsafe {
        match ffi::sqlite3_value_type(v) {
            ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(v)),
            ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(v)),
            ffi::SQLITE_TEXT => {
                let p = ffi::sqlite3_value_text(v);
                ValueRef::Text(bytes(p, ffi::sqlite3_value_bytes(v)))
            }
            ffi::SQLITE_BLOB => {
                let p = ffi::sqlite3_value_blob(v).cast::<u8>();
                ValueRef::Blob(bytes(p, ffi::sqlite3_value_bytes(v)))
            }
            _ => ValueRef::Null,
        }
    }
}

/// The `n` bytes at `p` (none for NULL or a length of 0).
///
/// # Safety
/// `p` points at `n` bytes that SQLite keeps valid for as long as the returned slice lives.
unsafe fn bytes<'a>(p: *const u8, n: c_int) -> &'a [u8] {
    match usize::try_from(n) {
        // SAFETY: the caller's promise.
        Ok(n) if !p.is_null() && n > 0 => unsafe { std::slice::from_raw_parts(p, n) },
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory database with `schema` run on it.
    fn database(schema: &str) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(schema).unwrap();
        conn
    }

    fn prepare(conn: &Connection, sql: &str) -> RawStmt {
        RawStmt::prepare(conn, sql.as_bytes(), false).unwrap().stmt.unwrap()
    }

    /// The first column of the statement's one row, as text (None for NULL).
    fn text_of(stmt: &mut RawStmt) -> Option<Vec<u8>> {
        assert_eq!(stmt.step(), ffi::SQLITE_ROW);
        let text = match stmt.column(0) {
            ValueRef::Text(t) => Some(t.to_vec()),
            ValueRef::Null => None,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(stmt.reset(), ffi::SQLITE_OK);
        text
    }

    fn long(c: u8) -> Vec<u8> {
        vec![c; 100_000]
    }

    #[test]
    fn kept_text_is_read_in_place_until_its_parameter_is_bound_again() {
        let conn = database("");
        let mut stmt = prepare(&conn, "SELECT ?1 || ?2");
        assert_eq!(stmt.bind_text_kept(1, long(b'a')), ffi::SQLITE_OK);
        assert_eq!(stmt.bind(2, ValueRef::Text(b"!")), ffi::SQLITE_OK);
        let mut expected = long(b'a');
        expected.push(b'!');
        assert_eq!(text_of(&mut stmt), Some(expected));
        // A second kept text of the same parameter replaces the first.
        assert_eq!(stmt.bind_text_kept(1, long(b'b')), ffi::SQLITE_OK);
        assert_eq!(stmt.kept.len(), 1);
        assert_eq!(text_of(&mut stmt).unwrap()[..3], *b"bbb");
        // Any other value bound there releases it.
        assert_eq!(stmt.bind(1, ValueRef::Text(b"c")), ffi::SQLITE_OK);
        assert!(stmt.kept.is_empty());
        assert_eq!(text_of(&mut stmt), Some(b"c!".to_vec()));
    }

    #[test]
    fn a_refused_bind_keeps_the_text_sqlite_still_reads() {
        let conn = database("");
        let mut stmt = prepare(&conn, "SELECT ?1");
        assert_eq!(stmt.bind_text_kept(1, long(b'a')), ffi::SQLITE_OK);
        // Out of range: SQLite binds nothing, and the new text is not kept.
        assert_eq!(stmt.bind_text_kept(2, long(b'z')), ffi::SQLITE_RANGE);
        assert_eq!(stmt.kept.len(), 1);
        // A running statement refuses new bindings (SQLITE_MISUSE): the old text stays.
        assert_eq!(stmt.step(), ffi::SQLITE_ROW);
        assert_eq!(stmt.bind(1, ValueRef::Null), ffi::SQLITE_MISUSE);
        assert_eq!(stmt.bind_text_kept(1, long(b'b')), ffi::SQLITE_MISUSE);
        assert_eq!(stmt.kept.len(), 1);
        assert_eq!(stmt.reset(), ffi::SQLITE_OK);
        assert_eq!(text_of(&mut stmt), Some(long(b'a')));
    }

    #[test]
    fn cleared_bindings_release_kept_text() {
        let conn = database("");
        let mut stmt = prepare(&conn, "SELECT ?1");
        assert_eq!(stmt.bind_text_kept(1, long(b'a')), ffi::SQLITE_OK);
        stmt.clear_bindings();
        assert!(stmt.kept.is_empty());
        assert_eq!(text_of(&mut stmt), None);
    }

    #[test]
    fn kept_text_survives_a_statement_prepared_again_after_a_schema_change() {
        let conn = database("CREATE TABLE t (s TEXT); INSERT INTO t VALUES ('x')");
        let mut stmt = prepare(&conn, "SELECT ?1 FROM t");
        assert_eq!(stmt.bind_text_kept(1, long(b'a')), ffi::SQLITE_OK);
        assert_eq!(text_of(&mut stmt), Some(long(b'a')));
        // SQLite prepares the statement again at its next step and moves its bindings over.
        conn.execute_batch("ALTER TABLE t ADD COLUMN n").unwrap();
        assert_eq!(text_of(&mut stmt), Some(long(b'a')));
    }

    #[test]
    fn kept_text_converts_on_a_utf16_database() {
        let conn = database("PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (s TEXT)");
        let mut insert = prepare(&conn, "INSERT INTO t VALUES (?1)");
        let text = "é".repeat(50_000).into_bytes();
        assert_eq!(insert.bind_text_kept(1, text.clone()), ffi::SQLITE_OK);
        assert_eq!(insert.step(), ffi::SQLITE_DONE);
        let mut select = prepare(&conn, "SELECT s FROM t");
        assert_eq!(text_of(&mut select), Some(text));
    }
}
