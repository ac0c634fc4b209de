//! Online backups of a connection and its serialization, for `db.backup()` and
//! `db.serialize()` (better-sqlite3 12's src/objects/backup.cpp and
//! `Database::JS_serialize`). A backup is stepped from JS, one step per native call
//! (`calls`); the backups of a connection are kept with it (`connection::backups`) and
//! finished before it closes, as better-sqlite3 does. The destination file never gets
//! more permission bits than the source's (`dest_file`).

use rusqlite::{ffi, Connection};

use crate::engine::connection::backups::{BackupJob, Backups};
use crate::engine::connection::open::{self, OpenMode};
use crate::error::{SResult, StoreError};
use crate::ffi::sqlite::{self as raw, RawBackup};

pub mod calls;
pub mod dest_file;

/// Opens `dest` (created if missing) and starts copying schema `source_name` of `source`
/// into it, kept in `backups`. `unlink`: the file is new; remove it unless the copy
/// completes (on POSIX whether this call created it decides). `dest` never gets more
/// permission bits than the source's file (dest_file).
pub fn start(backups: &mut Backups, source: &Connection, source_name: &str, dest: &str, unlink: bool) -> SResult<u32> {
    // better-sqlite3 hands SQLite the name as a C string: it ends at a NUL.
    let source_name = source_name.split('\0').next().unwrap_or_default();
    if let Err(refusal) = open::refuse_nul(dest) {
        return Err(unknown_schema(source, source_name).unwrap_or(refusal));
    }
    let unlink = match dest_file::schema_file(source, source_name) {
        Some(file) => dest_file::prepare(&file, dest)?.unwrap_or(unlink),
        None => unlink,
    };
    // better-sqlite3 opens the destination read-write with no busy timeout: a locked
    // destination makes a step return SQLITE_BUSY, retried by the next step.
    let mode = OpenMode {
        timeout_ms: Some(0.0),
        ..OpenMode::default()
    };
    let conn = open::open(dest, mode)?;
    // better-sqlite3 lifts the destination's length limit.
    raw::set_limit(&conn, ffi::SQLITE_LIMIT_LENGTH, i32::MAX);
    let backup = RawBackup::init(source, source_name, conn)?;
    Ok(backups.insert(BackupJob {
        backup: Some(backup),
        path: dest.to_string(),
        unlink,
    }))
}

/// One step of backup `id` by `pages` pages; returns (totalPages, remainingPages).
/// SQLITE_BUSY is not an error (the next step retries); other failures are reported by
/// their primary code and SQLite's text for it, as better-sqlite3 does.
pub fn step(backups: &mut Backups, id: u32, pages: i32) -> SResult<(i32, i32)> {
    let job = backups
        .get_mut(id)
        .ok_or_else(|| StoreError::type_error("The backup is closed"))?;
    let backup = job
        .backup
        .as_mut()
        .ok_or_else(|| StoreError::type_error("The backup is closed"))?;
    let status = backup.step(pages) & 0xff;
    match status {
        ffi::SQLITE_OK | ffi::SQLITE_BUSY => {}
        ffi::SQLITE_DONE => job.unlink = false,
        code => return Err(StoreError::sqlite(code, raw::errstr(code))),
    }
    Ok(backup.progress())
}

/// The error of backing up an unknown schema, found with an in-memory stand-in for the
/// destination. A destination path holding a NUL is refused (`open::refuse_nul`),
/// where better-sqlite3 opens the file it names up to the NUL and then fails on an
/// unknown schema: that error comes first, as there.
fn unknown_schema(source: &Connection, source_name: &str) -> Option<StoreError> {
    let stand_in = open::open(":memory:", OpenMode::default());
    stand_in
        .and_then(|dest| RawBackup::init(source, source_name, dest))
        .err()
}

/// `sqlite3_serialize` of schema `name` (rusqlite's `serialize`). As in better-sqlite3, an
/// unknown schema is the Error "Out of memory", and a database SQLite cannot give a first
/// page to (an empty read-only file) serializes to no bytes.
pub fn serialize(conn: &Connection, name: &str) -> SResult<Vec<u8>> {
    // No query runs first: SQLite copies an in-memory database as it is, even one whose
    // schema it cannot read (a truncated image), as better-sqlite3 returns it.
    Ok(raw::serialize(conn, name)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(name: &str) -> String {
        let dir = std::env::temp_dir().join(format!("tfx-backup-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        dir.to_string_lossy().into_owned()
    }

    fn source(rows: i64) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            .unwrap();
        for i in 0..rows {
            conn.execute("INSERT INTO t (v) VALUES (?)", [format!("{i}:{}", "x".repeat(500))])
                .unwrap();
        }
        conn
    }

    #[test]
    fn steps_copy_every_page_and_keep_the_finished_file() {
        let src = source(200);
        let path = temp_path("done");
        let mut backups = Backups::default();
        let id = start(&mut backups, &src, "main", &path, true).unwrap();
        let (total, remaining) = step(&mut backups, id, 0).unwrap();
        assert!(total > 10);
        assert_eq!(remaining, total, "a 0-page step copies nothing");
        let mut steps = 0;
        loop {
            let (t, r) = step(&mut backups, id, 5).unwrap();
            assert_eq!(t, total);
            steps += 1;
            if r == 0 {
                break;
            }
        }
        assert_eq!(steps, (total + 4) / 5);
        backups.close(id);
        let copy = Connection::open(&path).unwrap();
        let n: i64 = copy.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 200);
        drop(copy);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn an_unfinished_new_file_is_removed_and_clear_ends_every_backup() {
        let src = source(200);
        let (a, b) = (temp_path("a"), temp_path("b"));
        // `b` exists before the backup (an empty file is an empty database).
        std::fs::write(&b, b"").unwrap();
        let mut backups = Backups::default();
        let ida = start(&mut backups, &src, "main", &a, true).unwrap();
        let idb = start(&mut backups, &src, "main", &b, false).unwrap();
        assert_ne!(ida, idb);
        step(&mut backups, ida, 3).unwrap();
        step(&mut backups, idb, 3).unwrap();
        assert!(std::path::Path::new(&a).exists());
        backups.clear();
        assert!(!std::path::Path::new(&a).exists(), "new and unfinished: removed");
        assert!(std::path::Path::new(&b).exists(), "not new: kept");
        assert!(step(&mut backups, ida, 1).is_err());
        // The source closes cleanly: no backup is left on it.
        src.close().unwrap();
        std::fs::remove_file(&b).unwrap();
    }

    #[test]
    fn unknown_schemas_fail_like_better_sqlite3() {
        let src = source(1);
        let mut backups = Backups::default();
        let err = start(&mut backups, &src, "nope", &temp_path("nope"), true).unwrap_err();
        assert!(format!("{err:?}").contains("unknown database nope"), "{err:?}");
        let conn = Connection::open_in_memory().unwrap();
        assert!(format!("{:?}", serialize(&conn, "nope").unwrap_err()).contains("Out of memory"));
        // SQLite gives an empty database its first page before serializing it.
        assert_eq!(serialize(&conn, "main").unwrap().len(), 4096);
        let _ = std::fs::remove_file(temp_path("nope"));
    }
}
