//! SQL text to statements, as better-sqlite3 does it: `prepare` takes exactly one
//! statement (comments and whitespace may follow), `exec` runs a whole script.

use crate::engine::connection::Core;
use crate::engine::js::value::JsVal;
use crate::engine::statement::Statement;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::Utf8;
use crate::ffi::sqlite as raw;

use super::verbose::log_stmt;
use super::{no_iterators_unless_unsafe, statements};
use crate::ffi::napi::Napi;

/// The SQL text as V8's `String::Utf8Value` gives it to SQLite (WTF-8), cut at the first
/// NUL (SQLite stops there).
fn sql_bytes(source: &JsVal) -> SResult<Utf8> {
    let mut bytes = source.sqlite_text()?;
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    Ok(bytes)
}

fn is_skipped(c: u8) -> bool {
    c == b' ' || c == b';' || (b'\t'..=b'\r').contains(&c)
}

/// Whether only whitespace, semicolons and comments remain in `rest`.
fn only_comments(rest: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&c) = rest.get(i) {
        if is_skipped(c) {
            i += 1;
        } else if rest[i..].starts_with(b"/*") {
            i = match rest[i + 2..].windows(2).position(|w| w == b"*/") {
                Some(end) => i + 2 + end + 2,
                None => rest.len(),
            };
        } else if rest[i..].starts_with(b"--") {
            i = match rest[i + 2..].iter().position(|&b| b == b'\n') {
                Some(end) => i + 2 + end + 1,
                None => rest.len(),
            };
        } else {
            return false;
        }
    }
    true
}

/// Prepares one statement like better-sqlite3's `Statement::JS_new`. Returns it and
/// whether it returns data (a pragma always may).
pub(super) fn prepare_one(core: &Core, source: &JsVal, pragma: bool) -> SResult<(Statement, bool)> {
    if pragma {
        no_iterators_unless_unsafe(core)?;
    }
    let sql = sql_bytes(source)?;
    let prepared = Statement::prepare(&core.conn, &sql, !pragma)?;
    let Some(stmt) = prepared.stmt else {
        return Err(StoreError::range_error(
            "The supplied SQL string contains no statements",
        ));
    };
    if !only_comments(sql.get(prepared.tail..).unwrap_or_default()) {
        return Err(StoreError::range_error(
            "The supplied SQL string contains more than one statement",
        ));
    }
    let returns_data = stmt.column_count() >= 1 || pragma;
    Ok((stmt, returns_data))
}

/// `Database::JS_exec`: every statement of the script in turn (each logged first),
/// stopping at the first error. The connection is busy meanwhile: a user function it
/// calls cannot use it.
pub(super) fn exec_script(js: Napi, core: &Core, source: &JsVal) -> SResult<()> {
    no_iterators_unless_unsafe(core)?;
    let _busy = statements(core)?;
    let sql = sql_bytes(source)?;
    let mut rest: &[u8] = &sql;
    loop {
        while rest.first().is_some_and(|&c| is_skipped(c)) {
            rest = &rest[1..];
        }
        let prepared = Statement::prepare(&core.conn, rest, false)?;
        let Some(mut stmt) = prepared.stmt else {
            return Ok(());
        };
        rest = rest.get(prepared.tail..).unwrap_or_default();
        log_stmt(js, core, &stmt)?;
        while stmt.step() == rusqlite::ffi::SQLITE_ROW {}
        if stmt.reset() != rusqlite::ffi::SQLITE_OK {
            return Err(raw::last_error(&core.conn));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::only_comments;

    #[test]
    fn trailing_comments_and_whitespace_are_one_statement() {
        assert!(only_comments(b" ;\n-- note\n/* block */ ;"));
        assert!(only_comments(b"-- unterminated line comment"));
        assert!(only_comments(b"/* unterminated block"));
        assert!(!only_comments(b"; SELECT 2"));
        assert!(!only_comments(b"/* c */ x"));
    }
}
