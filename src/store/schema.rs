//! Open-time behaviour of the original `createStore`: PRAGMAs, `_meta`, the column seams
//! before and after the schema, the version marker and its mismatch warning, for each
//! schema version the package serves (`SchemaVersion`: "6", "7" and "8").

use std::sync::OnceLock;

use rusqlite::{Connection, OptionalExtension};

use crate::error::{SResult, StoreError};

/// The schema as version "6" writes it; later versions add to it (`SchemaVersion::schema_sql`).
pub const SCHEMA_SQL: &str = include_str!("schema.sql");
/// Schema 8's triggers refusing an active role without a holder.
const ROLE_INTEGRITY_SQL: &str = include_str!("role_integrity.sql");
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

/// The hub release a store speaks for, by the `_meta.schema_version` it writes. Every
/// difference between them in the open-time steps is decided here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchemaVersion {
    /// The role registry (the seed).
    V6,
    /// Presence generations fence a stale agent's writes (`agents.presence_generation`).
    V7,
    /// Role-registry integrity: no `active` role without a holder.
    V8,
}

impl SchemaVersion {
    #[cfg(test)]
    pub const ALL: [SchemaVersion; 3] = [SchemaVersion::V6, SchemaVersion::V7, SchemaVersion::V8];

    /// The version numbered `n` ("6", "7" or "8" in `_meta`).
    pub fn from_number(n: u32) -> SResult<SchemaVersion> {
        match n {
            6 => Ok(SchemaVersion::V6),
            7 => Ok(SchemaVersion::V7),
            8 => Ok(SchemaVersion::V8),
            _ => Err(StoreError::range_error("the store's schema version is 6, 7 or 8")),
        }
    }

    /// The text written to `_meta.schema_version`.
    pub fn label(self) -> &'static str {
        match self {
            SchemaVersion::V6 => "6",
            SchemaVersion::V7 => "7",
            SchemaVersion::V8 => "8",
        }
    }

    /// This version's schema.sql: the v6 text, plus `agents.presence_generation` in its
    /// fresh-table place from 7 on, plus the role_registry CHECK from 8 on (both exactly
    /// as the originals' files have them: sqlite_master keeps the text).
    pub fn schema_sql(self) -> &'static str {
        static TEXTS: OnceLock<[String; 3]> = OnceLock::new();
        let texts = TEXTS.get_or_init(|| {
            let v7 = insert_after(
                SCHEMA_SQL,
                "  lease_expires_ms INTEGER NOT NULL,\n",
                "  presence_generation INTEGER NOT NULL DEFAULT 0,\n",
            );
            let v8 = insert_after(
                &v7,
                "    (role_kind = 'lead' AND scope_id <> '')\n  ),\n",
                "  CHECK (state <> 'active' OR holder_agent_id IS NOT NULL),\n",
            );
            [SCHEMA_SQL.to_string(), v7, v8]
        });
        &texts[self as usize]
    }
}

/// `text` with `line` inserted after the one place `anchor` occurs.
fn insert_after(text: &str, anchor: &str, line: &str) -> String {
    debug_assert_eq!(text.matches(anchor).count(), 1, "schema.sql has one {anchor:?}");
    let at = text.find(anchor).map(|i| i + anchor.len()).unwrap_or(text.len());
    format!("{}{line}{}", &text[..at], &text[at..])
}

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

/// Schema 7's column, added last to an agents table an older version created.
fn ensure_v7_columns(conn: &Connection) -> SResult<()> {
    if has_table(conn, "agents")? {
        ensure_column(conn, "agents", "presence_generation", "INTEGER NOT NULL DEFAULT 0")?;
    }
    Ok(())
}

/// The column seams of `version` that run before and after the schema step.
fn ensure_columns(conn: &Connection, version: SchemaVersion) -> SResult<()> {
    ensure_v6_columns(conn)?;
    if version >= SchemaVersion::V7 {
        ensure_v7_columns(conn)?;
    }
    Ok(())
}

/// Runs every open-time step of `version`'s original in its order and returns the
/// warnings it would print.
pub fn open_store(conn: &Connection, version: SchemaVersion) -> SResult<Vec<String>> {
    let expected = version.label();
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

    ensure_columns(conn, version)?;
    if current.as_deref() != Some(expected) {
        if let Some(found) = &current {
            warnings.push(format!(
                "[store] schema version mismatch: found={found} expected={expected}. Applying schema.sql (idempotent)."
            ));
        }
        conn.execute_batch(version.schema_sql())?;
        conn.execute(
            "INSERT OR REPLACE INTO _meta (key, value) VALUES ('schema_version', ?)",
            [expected],
        )?;
    }
    // Every boot: repairs a partly applied migration.
    ensure_columns(conn, version)?;
    if version >= SchemaVersion::V8 {
        conn.execute_batch(ROLE_INTEGRITY_SQL)?;
    }
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
        assert!(open_store(&conn, SchemaVersion::V6).unwrap().is_empty());
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
        assert!(open_store(&conn, SchemaVersion::V6).unwrap().is_empty());
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
        let warnings = open_store(&conn, SchemaVersion::V6).unwrap();
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

    fn version_of(conn: &Connection) -> String {
        conn.query_row("SELECT value FROM _meta WHERE key='schema_version'", [], |r| r.get(0))
            .unwrap()
    }

    fn triggers(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type='trigger' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn each_version_adds_its_line_to_the_v6_schema_text() {
        let [v6, v7, v8] = SchemaVersion::ALL.map(SchemaVersion::schema_sql);
        let column =
            "  lease_expires_ms INTEGER NOT NULL,\n  presence_generation INTEGER NOT NULL DEFAULT 0,\n  status";
        let check = "  ),\n  CHECK (state <> 'active' OR holder_agent_id IS NOT NULL),\n  UNIQUE(project_id, role_kind, scope_id)";
        assert!(!v6.contains("presence_generation") && !v6.contains("holder_agent_id IS NOT NULL"));
        assert!(v7.contains(column) && !v7.contains("holder_agent_id IS NOT NULL"));
        assert!(v8.contains(column) && v8.contains(check));
        assert_eq!(
            v8.len() - v6.len(),
            v7.len() - v6.len() + check.len() - "  ),\n  UNIQUE(project_id, role_kind, scope_id)".len()
        );
    }

    #[test]
    fn a_fresh_v7_file_has_the_generation_in_place_and_v8_adds_the_guards() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(open_store(&conn, SchemaVersion::V7).unwrap().is_empty());
        let cols = columns(&conn, "agents");
        let at = cols.iter().position(|c| c == "presence_generation").unwrap();
        assert_eq!(cols[at - 1], "lease_expires_ms");
        assert_eq!(version_of(&conn), "7");
        assert!(triggers(&conn).is_empty());

        let warnings = open_store(&conn, SchemaVersion::V8).unwrap();
        assert_eq!(
            warnings,
            vec!["[store] schema version mismatch: found=7 expected=8. Applying schema.sql (idempotent).".to_string()]
        );
        assert_eq!(version_of(&conn), "8");
        assert_eq!(
            triggers(&conn),
            [
                "role_registry_active_holder_insert",
                "role_registry_active_holder_update"
            ]
        );
        let refused = conn.execute_batch(
            "INSERT INTO role_registry (role_key_wire, project_id, role_kind, state, last_transition_ms, last_reason)
             VALUES ('k', 'p', 'cto', 'active', 1, 'r')",
        );
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("active role requires holder_agent_id"));
    }

    #[test]
    fn a_v6_file_opened_as_v7_gets_the_column_last_and_back_as_v6_keeps_it() {
        let conn = Connection::open_in_memory().unwrap();
        open_store(&conn, SchemaVersion::V6).unwrap();
        conn.execute_batch(
            "INSERT INTO agents (agent_id, cli, last_seen_ms, lease_expires_ms, status) VALUES ('a', 'codex', 1, 2, 'online')",
        )
        .unwrap();
        assert_eq!(open_store(&conn, SchemaVersion::V7).unwrap().len(), 1);
        assert_eq!(columns(&conn, "agents").last().unwrap(), "presence_generation");
        let generation: i64 = conn
            .query_row("SELECT presence_generation FROM agents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(generation, 0);
        assert_eq!(
            open_store(&conn, SchemaVersion::V6).unwrap(),
            vec!["[store] schema version mismatch: found=7 expected=6. Applying schema.sql (idempotent).".to_string()]
        );
        assert_eq!(version_of(&conn), "6");
        assert!(columns(&conn, "agents").contains(&"presence_generation".to_string()));
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
        crate::engine::connection::open::configure(&conn).unwrap();
        open_store(&conn, SchemaVersion::V6).unwrap();
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
