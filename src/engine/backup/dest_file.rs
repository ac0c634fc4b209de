//! The file a copy of a database goes to is never readable by more users than the
//! database's own file. On POSIX the destination is created here, empty, with the source's
//! permission bits (the umask may narrow them further), or an existing one is narrowed to
//! them, before SQLite writes a byte into it; SQLite then gives the copy's -journal and
//! -wal the copy's mode. Elsewhere (Windows) SQLite creates the file and it takes the
//! folder's inherited ACL.

use rusqlite::Connection;

use crate::error::SResult;

use crate::ffi::sqlite as raw;

/// SQLite's mode for a new database file, for a source that has none (in memory, temporary).
#[cfg(unix)]
const SQLITE_DEFAULT_MODE: u32 = 0o644;
/// The mode for a source file that can no longer be looked at (removed while open).
#[cfg(unix)]
const UNKNOWN_SOURCE_MODE: u32 = 0o600;

/// The file behind schema `name` of `conn`: `Some("")` for an in-memory or temporary
/// schema, `None` when there is no such schema (SQLite reports that error itself). No query
/// runs: a source whose schema SQLite cannot read fails where better-sqlite3's does.
pub fn schema_file(conn: &Connection, name: &str) -> Option<String> {
    raw::db_filename(conn, name)
}

/// Makes `dest` ready to receive a copy of the database file `source` ("" for none).
/// Returns `Some(true)` when it created `dest`, `Some(false)` when `dest` existed or could
/// not be created here (SQLite then reports why when it opens it), `None` where file modes
/// are not handled (not POSIX).
#[cfg(unix)]
pub fn prepare(source: &str, dest: &str) -> SResult<Option<bool>> {
    use std::fs::{self, OpenOptions, Permissions};
    use std::io::ErrorKind;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

    let source_mode = if source.is_empty() {
        SQLITE_DEFAULT_MODE
    } else {
        fs::metadata(source)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(UNKNOWN_SOURCE_MODE)
    };
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(source_mode)
        .open(dest)
    {
        Ok(_) => return Ok(Some(true)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(_) => return Ok(Some(false)),
    }
    // An existing regular file: its bits are narrowed to the source's (never widened).
    // Anything else (a directory, a FIFO that an open would block on) is SQLite's to refuse.
    if !fs::metadata(dest).is_ok_and(|m| m.is_file()) {
        return Ok(Some(false));
    }
    let Ok(file) = OpenOptions::new().write(true).open(dest) else {
        return Ok(Some(false));
    };
    let meta = file.metadata().map_err(|e| io_error(dest, e))?;
    let mode = meta.permissions().mode() & 0o777;
    if !meta.is_file() || mode & !source_mode == 0 {
        return Ok(Some(false));
    }
    file.set_permissions(Permissions::from_mode(mode & source_mode))
        .map_err(|e| io_error(dest, e))?;
    Ok(Some(false))
}

#[cfg(not(unix))]
pub fn prepare(_source: &str, _dest: &str) -> SResult<Option<bool>> {
    Ok(None)
}

#[cfg(unix)]
fn io_error(dest: &str, e: std::io::Error) -> crate::error::StoreError {
    crate::error::StoreError::error(format!(
        "Cannot give the backup file {dest} its source's permissions: {e}"
    ))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn temp(name: &str) -> String {
        let p = std::env::temp_dir().join(format!("tfx-dest-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p.to_string_lossy().into_owned()
    }

    fn mode(path: &str) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_gets_at_most_the_source_bits_and_an_open_one_is_narrowed() {
        let (src, new, old) = (temp("src"), temp("new"), temp("old"));
        std::fs::write(&src, b"x").unwrap();
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(prepare(&src, &new).unwrap(), Some(true));
        assert_eq!(mode(&new) & !0o600, 0, "never more open than the source");
        assert_eq!(std::fs::metadata(&new).unwrap().len(), 0);
        std::fs::write(&old, b"y").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert_eq!(prepare(&src, &old).unwrap(), Some(false));
        assert_eq!(mode(&old), 0o600);
        assert_eq!(std::fs::read(&old).unwrap(), b"y", "its bytes are SQLite's to replace");
        for p in [src, new, old] {
            std::fs::remove_file(p).unwrap();
        }
    }
}
