//! Open-time behaviour of the original `createStore`: PRAGMAs, `_meta`, the v6 column
//! seams before and after the schema, the version marker and its mismatch warning.

use rusqlite::{Connection, OptionalExtension};

use crate::error::SResult;

pub const SCHEMA_VERSION: &str = "6";
pub const SCHEMA_SQL: &str = include_str!("schema.sql");
/// Indexes for a large log; see src/store/scale.rs.
pub const LARGE_LOG_SQL: &str = include_str!("large_log.sql");
/// Connection-local row counters; see src/store/scale.rs.
pub const COUNTERS_SQL: &str = include_str!("counters.sql");
/// `journal_size_limit` set at open: once a checkpoint has copied every frame back (no
/// reader pins the WAL any more), the next commit restarts the WAL and truncates the file
/// to this size. The original set none, so a WAL that a long reader let grow kept its
/// size until the last connection closed. Changeable per connection with
/// `store.db.pragma('journal_size_limit = N')` (-1: no limit).
pub const JOURNAL_SIZE_LIMIT: i64 = 16 * 1024 * 1024;

fn has_table(conn: &Connection, table: &str) -> SResult<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
            [table],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

fn has_column(conn: &Connection, table: &str, column: &str) -> SResult<bool> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let name: String = row.get("name")?;
        if name == column {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Adds a column unless it exists; added columns land last, as in the original.
fn ensure_column(conn: &Connection, table: &str, column: &str, definition: &str) -> SResult<()> {
    if !has_column(conn, table, column)? {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {definition}"))?;
    }
    Ok(())
}

/// The seam that lets a v4/v5 file take the v6 schema: the v6 index on
/// `messages.role_key_wire` needs the column before schema.sql runs.
fn ensure_v6_columns(conn: &Connection) -> SResult<()> {
    if has_table(conn, "agents")? {
        ensure_column(conn, "agents", "project_id", "TEXT")?;
        ensure_column(conn, "agents", "session_id", "TEXT")?;
        ensure_column(conn, "agents", "host_id", "TEXT")?;
        ensure_column(conn, "agents", "transport_locators_json", "TEXT NOT NULL DEFAULT '[]'")?;
    }
    if has_table(conn, "messages")? {
        ensure_column(conn, "messages", "role_key_wire", "TEXT")?;
    }
    Ok(())
}

/// Runs every open-time step in the original's order and returns the warnings it
/// would print.
pub fn open_store(conn: &Connection) -> SResult<Vec<String>> {
    let mut warnings = Vec::new();
    // Each PRAGMA is its own call, as in the original (journal_mode is persisted).
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).optional()?;
    conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    conn.query_row("PRAGMA busy_timeout = 5000", [], |_| Ok(()))
        .optional()?;
    conn.query_row("PRAGMA wal_autocheckpoint = 1000", [], |_| Ok(()))
        .optional()?;
    conn.query_row(&format!("PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}"), [], |_| {
        Ok(())
    })
    .optional()?;

    conn.execute_batch("CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT)")?;
    let current: Option<String> = conn
        .query_row("SELECT value FROM _meta WHERE key='schema_version'", [], |r| {
            r.get::<_, Option<String>>(0)
        })
        .optional()
        .ok()
        .flatten()
        .flatten();

    ensure_v6_columns(conn)?;
    if current.as_deref() != Some(SCHEMA_VERSION) {
        if let Some(found) = &current {
            warnings.push(format!(
                "[store] schema version mismatch: found={found} expected={SCHEMA_VERSION}. Applying schema.sql (idempotent)."
            ));
        }
        conn.execute_batch(SCHEMA_SQL)?;
        conn.execute(
            "INSERT OR REPLACE INTO _meta (key, value) VALUES ('schema_version', ?)",
            [SCHEMA_VERSION],
        )?;
    }
    // Every boot: repairs a partly applied migration.
    ensure_v6_columns(conn)?;
    ensure_column(conn, "reflexion_entries", "type", "TEXT NOT NULL DEFAULT 'reflexion'")?;
    ensure_column(conn, "assign_jobs", "dispatched_at_ms", "INTEGER")?;
    ensure_column(
        conn,
        "reflexion_entries",
        "adaptive_state_json",
        "TEXT NOT NULL DEFAULT '{}'",
    )?;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})")).unwrap();
        stmt.query_map([], |r| r.get::<_, String>("name"))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn fresh_database_gets_schema_six_without_warning() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(open_store(&conn).unwrap().is_empty());
        let v: String = conn
            .query_row("SELECT value FROM _meta WHERE key='schema_version'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, "6");
        assert_eq!(
            columns(&conn, "assign_jobs")
                .iter()
                .filter(|c| *c == "dispatched_at_ms")
                .count(),
            1
        );
        // Reopening is idempotent.
        assert!(open_store(&conn).unwrap().is_empty());
    }

    #[test]
    fn v5_file_migrates_with_columns_appended_and_a_warning() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT);
             INSERT INTO _meta VALUES ('schema_version','5');
             CREATE TABLE messages (id TEXT PRIMARY KEY, type TEXT, from_agent TEXT, to_agent TEXT, topic TEXT,
               priority INTEGER, ttl_ms INTEGER, created_at_ms INTEGER, expires_at_ms INTEGER,
               correlation_id TEXT, trace_id TEXT, payload_json TEXT, status TEXT);
             INSERT INTO messages VALUES ('m1','event','a','b','t',5,1000,1,1001,'c','t','{}','queued');",
        )
        .unwrap();
        let warnings = open_store(&conn).unwrap();
        assert_eq!(
            warnings,
            vec!["[store] schema version mismatch: found=5 expected=6. Applying schema.sql (idempotent).".to_string()]
        );
        assert_eq!(columns(&conn, "messages").last().unwrap(), "role_key_wire");
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }
}

#[cfg(test)]
mod statement_cache_tests {
    use super::*;
    use rusqlite::StatementStatus;

    /// Cached statements must stay prepared when their parameters change (no re-parse
    /// per call), including those whose parameter meets an indexed column.
    #[test]
    fn cached_statements_are_not_reprepared_when_bindings_change() {
        let conn = Connection::open_in_memory().unwrap();
        crate::sqlite::connection::configure(&conn).unwrap();
        open_store(&conn).unwrap();
        for sql in [
            "SELECT * FROM role_candidates WHERE role_key_wire = ? ORDER BY priority DESC, updated_at_ms DESC, agent_id",
            "SELECT * FROM messages WHERE role_key_wire=? AND status IN ('queued','delivered') AND expires_at_ms > ? ORDER BY priority DESC, created_at_ms ASC, id",
            "SELECT * FROM agents WHERE agent_id = ?",
            "SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC LIMIT ?",
        ] {
            let params = sql.matches('?').count();
            for i in 0..5 {
                let mut stmt = conn.prepare_cached(sql).unwrap();
                for p in 1..=params {
                    if sql.ends_with("LIMIT ?") && p == params {
                        stmt.raw_bind_parameter(p, 10 + i).unwrap();
                    } else {
                        stmt.raw_bind_parameter(p, format!("value-{i}")).unwrap();
                    }
                }
                let mut rows = stmt.raw_query();
                while rows.next().unwrap().is_some() {}
                drop(rows);
                assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "{sql}");
            }
        }
    }
}
