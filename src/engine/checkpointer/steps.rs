//! What the checkpointer does around a statement's prepare and steps (part of
//! `checkpointer`), told by the statement's text: a step that may begin a write passes
//! the restart gate, `PRAGMA wal_autocheckpoint` runs with SQLite's own hook in place, an
//! explicit `PRAGMA wal_checkpoint` is announced to the checkpoint thread, and a prepared
//! `PRAGMA journal_size_limit` tells it the limit. On a connection without a checkpointer
//! each costs a look at the connection's client data, for writes only.

use std::ffi::c_int;

use rusqlite::Connection;

use crate::error::SResult;
use crate::ffi::sqlite::{db_of, RawStmt};

use super::gate::{self, is_begin};
use super::hook;

/// What the checkpointer does around one statement's steps.
#[derive(Clone, Copy, Default)]
pub struct StepKind {
    /// A PRAGMA naming wal_autocheckpoint: stepped with SQLite's own WAL hook in place,
    /// so that it reads and sets what it would without this package's.
    autocheckpoint_pragma: bool,
    /// A PRAGMA naming wal_checkpoint: its steps are announced to the hook's listener,
    /// which keeps its own checkpoints out of the way meanwhile.
    checkpoint_pragma: bool,
    /// A `BEGIN`: it may take the write lock, so it passes the restart gate.
    begins: bool,
}

impl StepKind {
    /// The kind of the one statement `sql`.
    pub fn of(sql: &[u8]) -> StepKind {
        StepKind {
            autocheckpoint_pragma: names_autocheckpoint_pragma(sql),
            checkpoint_pragma: pragma_naming(sql, "wal_checkpoint"),
            begins: is_begin(sql),
        }
    }
}

/// Runs `prepare` (of the first statement of `sql` on `conn`): SQLite runs
/// `PRAGMA wal_autocheckpoint` and `journal_size_limit` (read or set) while preparing them.
pub fn prepare<T>(conn: &Connection, sql: &[u8], prepare: impl FnOnce() -> SResult<T>) -> SResult<T> {
    let db = db_of(conn);
    let prepared = if names_autocheckpoint_pragma(sql) {
        hook::with_sqlite_hook(db, prepare)
    } else {
        prepare()
    };
    if prepared.is_ok() && pragma_naming(sql, "journal_size_limit") {
        hook::tell_journal_size_limit(conn, db);
    }
    prepared
}

/// Steps `stmt` (of `kind`) as the checkpointer needs it stepped.
#[inline]
pub fn step(stmt: &mut RawStmt, kind: StepKind) -> c_int {
    stmt.with_db(|db, stmt| {
        if kind.autocheckpoint_pragma {
            // A step may prepare the statement again (after a schema change).
            return hook::with_sqlite_hook(db, || stmt.step());
        }
        if kind.checkpoint_pragma {
            return hook::announced_checkpoint(db, || stmt.step());
        }
        let may_write = kind.begins || !stmt.readonly();
        gate::through(db, may_write, || stmt.step())
    })
}

/// Whether `sql` (one statement) is a PRAGMA that names `wal_autocheckpoint`.
fn names_autocheckpoint_pragma(sql: &[u8]) -> bool {
    pragma_naming(sql, "wal_autocheckpoint")
}

/// Whether `sql` starts with PRAGMA and contains `name` (lower case).
fn pragma_naming(sql: &[u8], name: &str) -> bool {
    let start = sql.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(sql.len());
    sql.len() - start >= 6
        && sql[start..start + 6].eq_ignore_ascii_case(b"pragma")
        && sql.windows(name.len()).any(|w| w.eq_ignore_ascii_case(name.as_bytes()))
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
