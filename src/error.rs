//! The one failure type of every layer, and the conversion from rusqlite's errors. SQLite
//! failures carry better-sqlite3's `.code` strings (thrown as `SqliteError`), binding
//! mistakes are TypeError/RangeError, domain errors keep their `.code`. Nothing here calls
//! SQLite or Node-API: throwing into JS is `js::throw`'s job, and a SQLite failure that
//! came without a message gets SQLite's text for its code there.

use rusqlite::ffi;

/// The JS error class a failure is thrown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsKind {
    Error,
    TypeError,
    RangeError,
}

#[derive(Debug)]
pub enum StoreError {
    /// SQLite said no: thrown as `SqliteError` with `.code` (the extended result code's
    /// name). Without a message, SQLite's own text for the code is used.
    Sqlite { code: i32, message: Option<String> },
    /// A plain JS error of the given class, optionally with a `.code`.
    Js {
        kind: JsKind,
        message: String,
        code: Option<String>,
    },
    /// A JS exception is already pending (thrown by a napi call into user code).
    Pending,
}

pub type SResult<T> = Result<T, StoreError>;

impl StoreError {
    pub fn type_error(message: impl Into<String>) -> Self {
        StoreError::Js {
            kind: JsKind::TypeError,
            message: message.into(),
            code: None,
        }
    }
    pub fn range_error(message: impl Into<String>) -> Self {
        StoreError::Js {
            kind: JsKind::RangeError,
            message: message.into(),
            code: None,
        }
    }
    pub fn error(message: impl Into<String>) -> Self {
        StoreError::Js {
            kind: JsKind::Error,
            message: message.into(),
            code: None,
        }
    }
    pub fn not_open() -> Self {
        Self::type_error("The database connection is not open")
    }
    pub fn sqlite(extended_code: i32, message: impl Into<String>) -> Self {
        StoreError::Sqlite {
            code: extended_code,
            message: Some(message.into()),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::SqliteFailure(err, message) => StoreError::Sqlite {
                code: err.extended_code,
                message,
            },
            rusqlite::Error::SqlInputError { error, msg, .. } => StoreError::sqlite(error.extended_code, msg),
            rusqlite::Error::InvalidParameterCount(_, _) => {
                StoreError::range_error("Too many parameter values were provided")
            }
            rusqlite::Error::NulError(_) => StoreError::type_error("SQL text must not contain NUL characters"),
            rusqlite::Error::MultipleStatement => {
                StoreError::range_error("The supplied SQL string contains more than one statement")
            }
            other => StoreError::error(other.to_string()),
        }
    }
}

/// better-sqlite3's names for SQLite's (extended) result codes.
const CODE_NAMES: &[(i32, &str)] = &[
    (ffi::SQLITE_OK, "SQLITE_OK"),
    (ffi::SQLITE_ERROR, "SQLITE_ERROR"),
    (ffi::SQLITE_INTERNAL, "SQLITE_INTERNAL"),
    (ffi::SQLITE_PERM, "SQLITE_PERM"),
    (ffi::SQLITE_ABORT, "SQLITE_ABORT"),
    (ffi::SQLITE_BUSY, "SQLITE_BUSY"),
    (ffi::SQLITE_LOCKED, "SQLITE_LOCKED"),
    (ffi::SQLITE_NOMEM, "SQLITE_NOMEM"),
    (ffi::SQLITE_READONLY, "SQLITE_READONLY"),
    (ffi::SQLITE_INTERRUPT, "SQLITE_INTERRUPT"),
    (ffi::SQLITE_IOERR, "SQLITE_IOERR"),
    (ffi::SQLITE_CORRUPT, "SQLITE_CORRUPT"),
    (ffi::SQLITE_NOTFOUND, "SQLITE_NOTFOUND"),
    (ffi::SQLITE_FULL, "SQLITE_FULL"),
    (ffi::SQLITE_CANTOPEN, "SQLITE_CANTOPEN"),
    (ffi::SQLITE_PROTOCOL, "SQLITE_PROTOCOL"),
    (ffi::SQLITE_EMPTY, "SQLITE_EMPTY"),
    (ffi::SQLITE_SCHEMA, "SQLITE_SCHEMA"),
    (ffi::SQLITE_TOOBIG, "SQLITE_TOOBIG"),
    (ffi::SQLITE_CONSTRAINT, "SQLITE_CONSTRAINT"),
    (ffi::SQLITE_MISMATCH, "SQLITE_MISMATCH"),
    (ffi::SQLITE_MISUSE, "SQLITE_MISUSE"),
    (ffi::SQLITE_NOLFS, "SQLITE_NOLFS"),
    (ffi::SQLITE_AUTH, "SQLITE_AUTH"),
    (ffi::SQLITE_FORMAT, "SQLITE_FORMAT"),
    (ffi::SQLITE_RANGE, "SQLITE_RANGE"),
    (ffi::SQLITE_NOTADB, "SQLITE_NOTADB"),
    (ffi::SQLITE_NOTICE, "SQLITE_NOTICE"),
    (ffi::SQLITE_WARNING, "SQLITE_WARNING"),
    (ffi::SQLITE_ROW, "SQLITE_ROW"),
    (ffi::SQLITE_DONE, "SQLITE_DONE"),
    (ffi::SQLITE_ERROR_MISSING_COLLSEQ, "SQLITE_ERROR_MISSING_COLLSEQ"),
    (ffi::SQLITE_ERROR_RETRY, "SQLITE_ERROR_RETRY"),
    (ffi::SQLITE_ERROR_SNAPSHOT, "SQLITE_ERROR_SNAPSHOT"),
    (ffi::SQLITE_IOERR_READ, "SQLITE_IOERR_READ"),
    (ffi::SQLITE_IOERR_SHORT_READ, "SQLITE_IOERR_SHORT_READ"),
    (ffi::SQLITE_IOERR_WRITE, "SQLITE_IOERR_WRITE"),
    (ffi::SQLITE_IOERR_FSYNC, "SQLITE_IOERR_FSYNC"),
    (ffi::SQLITE_IOERR_DIR_FSYNC, "SQLITE_IOERR_DIR_FSYNC"),
    (ffi::SQLITE_IOERR_TRUNCATE, "SQLITE_IOERR_TRUNCATE"),
    (ffi::SQLITE_IOERR_FSTAT, "SQLITE_IOERR_FSTAT"),
    (ffi::SQLITE_IOERR_UNLOCK, "SQLITE_IOERR_UNLOCK"),
    (ffi::SQLITE_IOERR_RDLOCK, "SQLITE_IOERR_RDLOCK"),
    (ffi::SQLITE_IOERR_DELETE, "SQLITE_IOERR_DELETE"),
    (ffi::SQLITE_IOERR_BLOCKED, "SQLITE_IOERR_BLOCKED"),
    (ffi::SQLITE_IOERR_NOMEM, "SQLITE_IOERR_NOMEM"),
    (ffi::SQLITE_IOERR_ACCESS, "SQLITE_IOERR_ACCESS"),
    (ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, "SQLITE_IOERR_CHECKRESERVEDLOCK"),
    (ffi::SQLITE_IOERR_LOCK, "SQLITE_IOERR_LOCK"),
    (ffi::SQLITE_IOERR_CLOSE, "SQLITE_IOERR_CLOSE"),
    (ffi::SQLITE_IOERR_DIR_CLOSE, "SQLITE_IOERR_DIR_CLOSE"),
    (ffi::SQLITE_IOERR_SHMOPEN, "SQLITE_IOERR_SHMOPEN"),
    (ffi::SQLITE_IOERR_SHMSIZE, "SQLITE_IOERR_SHMSIZE"),
    (ffi::SQLITE_IOERR_SHMLOCK, "SQLITE_IOERR_SHMLOCK"),
    (ffi::SQLITE_IOERR_SHMMAP, "SQLITE_IOERR_SHMMAP"),
    (ffi::SQLITE_IOERR_SEEK, "SQLITE_IOERR_SEEK"),
    (ffi::SQLITE_IOERR_DELETE_NOENT, "SQLITE_IOERR_DELETE_NOENT"),
    (ffi::SQLITE_IOERR_MMAP, "SQLITE_IOERR_MMAP"),
    (ffi::SQLITE_IOERR_GETTEMPPATH, "SQLITE_IOERR_GETTEMPPATH"),
    (ffi::SQLITE_IOERR_CONVPATH, "SQLITE_IOERR_CONVPATH"),
    (ffi::SQLITE_IOERR_VNODE, "SQLITE_IOERR_VNODE"),
    (ffi::SQLITE_IOERR_AUTH, "SQLITE_IOERR_AUTH"),
    (ffi::SQLITE_IOERR_BEGIN_ATOMIC, "SQLITE_IOERR_BEGIN_ATOMIC"),
    (ffi::SQLITE_IOERR_COMMIT_ATOMIC, "SQLITE_IOERR_COMMIT_ATOMIC"),
    (ffi::SQLITE_IOERR_ROLLBACK_ATOMIC, "SQLITE_IOERR_ROLLBACK_ATOMIC"),
    (ffi::SQLITE_IOERR_DATA, "SQLITE_IOERR_DATA"),
    (ffi::SQLITE_IOERR_CORRUPTFS, "SQLITE_IOERR_CORRUPTFS"),
    (ffi::SQLITE_LOCKED_SHAREDCACHE, "SQLITE_LOCKED_SHAREDCACHE"),
    (ffi::SQLITE_LOCKED_VTAB, "SQLITE_LOCKED_VTAB"),
    (ffi::SQLITE_BUSY_RECOVERY, "SQLITE_BUSY_RECOVERY"),
    (ffi::SQLITE_BUSY_SNAPSHOT, "SQLITE_BUSY_SNAPSHOT"),
    (ffi::SQLITE_BUSY_TIMEOUT, "SQLITE_BUSY_TIMEOUT"),
    (ffi::SQLITE_CANTOPEN_NOTEMPDIR, "SQLITE_CANTOPEN_NOTEMPDIR"),
    (ffi::SQLITE_CANTOPEN_ISDIR, "SQLITE_CANTOPEN_ISDIR"),
    (ffi::SQLITE_CANTOPEN_FULLPATH, "SQLITE_CANTOPEN_FULLPATH"),
    (ffi::SQLITE_CANTOPEN_CONVPATH, "SQLITE_CANTOPEN_CONVPATH"),
    (ffi::SQLITE_CANTOPEN_SYMLINK, "SQLITE_CANTOPEN_SYMLINK"),
    (ffi::SQLITE_CORRUPT_VTAB, "SQLITE_CORRUPT_VTAB"),
    (ffi::SQLITE_CORRUPT_SEQUENCE, "SQLITE_CORRUPT_SEQUENCE"),
    (ffi::SQLITE_CORRUPT_INDEX, "SQLITE_CORRUPT_INDEX"),
    (ffi::SQLITE_READONLY_RECOVERY, "SQLITE_READONLY_RECOVERY"),
    (ffi::SQLITE_READONLY_CANTLOCK, "SQLITE_READONLY_CANTLOCK"),
    (ffi::SQLITE_READONLY_ROLLBACK, "SQLITE_READONLY_ROLLBACK"),
    (ffi::SQLITE_READONLY_DBMOVED, "SQLITE_READONLY_DBMOVED"),
    (ffi::SQLITE_READONLY_CANTINIT, "SQLITE_READONLY_CANTINIT"),
    (ffi::SQLITE_READONLY_DIRECTORY, "SQLITE_READONLY_DIRECTORY"),
    (ffi::SQLITE_ABORT_ROLLBACK, "SQLITE_ABORT_ROLLBACK"),
    (ffi::SQLITE_CONSTRAINT_CHECK, "SQLITE_CONSTRAINT_CHECK"),
    (ffi::SQLITE_CONSTRAINT_COMMITHOOK, "SQLITE_CONSTRAINT_COMMITHOOK"),
    (ffi::SQLITE_CONSTRAINT_FOREIGNKEY, "SQLITE_CONSTRAINT_FOREIGNKEY"),
    (ffi::SQLITE_CONSTRAINT_FUNCTION, "SQLITE_CONSTRAINT_FUNCTION"),
    (ffi::SQLITE_CONSTRAINT_NOTNULL, "SQLITE_CONSTRAINT_NOTNULL"),
    (ffi::SQLITE_CONSTRAINT_PRIMARYKEY, "SQLITE_CONSTRAINT_PRIMARYKEY"),
    (ffi::SQLITE_CONSTRAINT_TRIGGER, "SQLITE_CONSTRAINT_TRIGGER"),
    (ffi::SQLITE_CONSTRAINT_UNIQUE, "SQLITE_CONSTRAINT_UNIQUE"),
    (ffi::SQLITE_CONSTRAINT_VTAB, "SQLITE_CONSTRAINT_VTAB"),
    (ffi::SQLITE_CONSTRAINT_ROWID, "SQLITE_CONSTRAINT_ROWID"),
    (ffi::SQLITE_CONSTRAINT_PINNED, "SQLITE_CONSTRAINT_PINNED"),
    (ffi::SQLITE_CONSTRAINT_DATATYPE, "SQLITE_CONSTRAINT_DATATYPE"),
    (ffi::SQLITE_NOTICE_RECOVER_WAL, "SQLITE_NOTICE_RECOVER_WAL"),
    (ffi::SQLITE_NOTICE_RECOVER_ROLLBACK, "SQLITE_NOTICE_RECOVER_ROLLBACK"),
    (ffi::SQLITE_WARNING_AUTOINDEX, "SQLITE_WARNING_AUTOINDEX"),
    (ffi::SQLITE_AUTH_USER, "SQLITE_AUTH_USER"),
    (ffi::SQLITE_OK_LOAD_PERMANENTLY, "SQLITE_OK_LOAD_PERMANENTLY"),
];

/// The `.code` better-sqlite3 gives an (extended) result code.
pub fn sqlite_code_name(code: i32) -> String {
    match CODE_NAMES.iter().find(|(c, _)| *c == code) {
        Some((_, name)) => (*name).to_string(),
        None => format!("UNKNOWN_SQLITE_ERROR_{code}"),
    }
}
