//! Messages: the audit log, lookups, status changes, the replay for agents, and the
//! dead-letter queue.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::js::bind::{bound_from_js, Arg, Bound};
use crate::js::calc::clamp;
use crate::js::json_in::is_valid_json;
use crate::js::json_out::{JsonOut, MESSAGE, RAW};
use crate::js::model::Val;
use crate::js::throw::Throw;
use crate::js::value::{js_input, JsVal};
use crate::native_db::NativeDb;
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::agents::{AGENTS_BY_TOPIC, GET_AGENT};
use crate::store::now;
use crate::store::queries::{self as exec, read_row};
use crate::store::uuid7::or_new_id;

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[
    SET_MESSAGE_STATUS,
    GET_MESSAGE,
    INSERT_DEAD_LETTER,
    INSERT_MESSAGE,
    RECENT_FOR_AGENT,
];

const INSERT_MESSAGE: &str = "INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
const SET_MESSAGE_STATUS: &str = "UPDATE messages SET status=? WHERE id=?";
const INSERT_DEAD_LETTER: &str =
    "INSERT OR REPLACE INTO dead_letters (message_id, reason, failed_at_ms, last_error) VALUES (?,?,?,?)";
const GET_MESSAGE: &str = "SELECT * FROM messages WHERE id=?";
// Newest first for one recipient: the original's statements, run as they are while the
// log is small (src/store/scale.rs), and their rewrites for the large-log indexes. Both
// give the same rows in the same order, ties included:
// * without topics, the original's plan read idx_messages_to_agent(to_agent, status) and
//   sorted by created_at_ms with a sort that keeps the scan order for ties, so rows with
//   equal created_at_ms came back by status (text order), then rowid;
// * with topics, it scanned the whole table (the OR has no index), so ties came back by
//   rowid.
const RECENT_FOR_AGENT: &str = "SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC LIMIT ?";
const RECENT_FOR_AGENT_WITH_TOPICS: &str = "SELECT * FROM messages WHERE to_agent=?
 OR (substr(to_agent, 1, 6)='topic:' AND topic IN (SELECT value FROM json_each(?)))
 ORDER BY created_at_ms DESC LIMIT ?";
// The rule spelled out; idx_messages_to_agent_recent(to_agent, created_at_ms DESC, status)
// holds exactly this order (an index ends with the rowid, ascending), so the rows come
// straight off the index: O(log n + limit).
const RECENT_FOR_AGENT_LARGE: &str =
    "SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC, status, rowid LIMIT ?";
// The recipient's newest ?3 (by created_at_ms, then rowid) and each topic's newest ?3 from
// idx_messages_topic_recent (partial: `topic:` rows only), then the newest ?3 of their
// union: O(topics × log n + limit). `topic = value` compares as `topic IN (SELECT value …)`
// did (the column's TEXT affinity applies to the JSON values); a row found twice counts once.
const RECENT_FOR_AGENT_WITH_TOPICS_LARGE: &str = "SELECT * FROM messages WHERE rowid IN (
   SELECT r FROM (SELECT rowid AS r FROM messages WHERE to_agent = ?1 ORDER BY created_at_ms DESC, rowid LIMIT ?3)
   UNION ALL
   SELECT m.rowid FROM (SELECT DISTINCT value AS v FROM json_each(?2)) t, messages m
    WHERE m.rowid IN (SELECT rowid FROM messages
                       WHERE topic = t.v AND substr(to_agent, 1, 6) = 'topic:'
                       ORDER BY created_at_ms DESC, rowid LIMIT ?3))
 ORDER BY created_at_ms DESC, rowid LIMIT ?3";

js_input!(
    /// auditLog's fields, with `expires_at = now + ttl_ms` and the payload JSON from the glue.
    AuditLogInput { msg_type, from, to, topic, priority, ttl_ms, expires_at, payload_json, trace_id, correlation_id, status, role_key_wire }
);

#[napi]
impl NativeDb {
    /// auditLog: one INSERT. The glue computes `now + ttl_ms` with JS's `+` and builds
    /// the row object; this returns `[id, correlation_id or null, trace_id or null]`
    /// (null: the caller's value was kept).
    #[napi]
    pub fn audit_log(&self, env: Env, input: JsVal, now: f64) -> Result<String> {
        let AuditLogInput {
            msg_type,
            from,
            to,
            topic,
            priority,
            ttl_ms,
            expires_at,
            payload_json,
            trace_id,
            correlation_id,
            status,
            role_key_wire,
        } = AuditLogInput::read(&input).map_err(|e| e.throw(env.raw()))?;
        self.with(&env, |core| {
            let id = crate::store::uuid7::next();
            let (correlation, new_correlation) = or_new_id(&correlation_id)?;
            let (trace, new_trace) = or_new_id(&trace_id)?;
            let params = [
                Bound::text(&id),
                bound_from_js(&msg_type)?,
                bound_from_js(&from)?,
                bound_from_js(&to)?,
                bound_from_js(&topic)?,
                bound_from_js(&priority)?,
                bound_from_js(&ttl_ms)?,
                Bound::num(now),
                bound_from_js(&expires_at)?,
                correlation,
                trace,
                bound_from_js(&payload_json)?,
                bound_from_js(&status)?,
                bound_from_js(&role_key_wire)?,
            ];
            exec::run(&core.conn, INSERT_MESSAGE, &params)?;
            crate::store::scale::after_message_insert(core);
            let mut out = JsonOut::new();
            out.raw("[");
            out.str(&id);
            for generated in [new_correlation, new_trace] {
                out.raw(",");
                match generated {
                    Some(g) => out.str(&g),
                    None => out.null(),
                }
            }
            out.raw("]");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn get_message(&self, env: Env, id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(&core.conn, GET_MESSAGE, &[Arg::Js(id)], &MESSAGE)
        })
    }

    #[napi]
    pub fn get_response_by_correlation(&self, env: Env, correlation_id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(
                &core.conn,
                "SELECT * FROM messages WHERE correlation_id=? AND type='response' ORDER BY created_at_ms DESC LIMIT 1",
                &[Arg::Js(correlation_id)],
                &MESSAGE,
            )
        })
    }

    #[napi]
    pub fn get_messages_by_trace(&self, env: Env, trace_id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(
                &core.conn,
                "SELECT * FROM messages WHERE trace_id=? ORDER BY created_at_ms",
                &[Arg::Js(trace_id)],
                &MESSAGE,
            )
        })
    }

    #[napi]
    pub fn update_message_status(&self, env: Env, id: JsVal, status: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            Ok(exec::run_args(&core.conn, SET_MESSAGE_STATUS, &[Arg::Js(status), Arg::Js(id)])? > 0)
        })
    }

    /// getAuditMessagesForAgent: newest first, at most `clamp(max_messages, 1..100)`.
    /// `topics_json` is the caller's non-empty `include_topics` (stringified by the
    /// glue) or undefined, in which case the agent's own topics are used.
    #[napi]
    pub fn get_audit_messages_for_agent(
        &self,
        env: Env,
        agent_id: JsVal,
        max_messages: JsVal,
        topics_json: JsVal,
    ) -> Result<String> {
        self.with(&env, |core| {
            crate::store::scale::tick_read(core, || {
                let limit = clamp(&Val::from_js(max_messages)?, Val::Num(20.0), 1.0, 100.0)?.bound()?;
                let topics: Option<Bound> = if topics_json.is_undefined() {
                    agent_topics(&core.conn, agent_id)?.map(|t| Bound::text(&t))
                } else {
                    Some(bound_from_js(&topics_json)?)
                };
                let large = crate::store::scale::large(core);
                let conn = &core.conn;
                match topics {
                    Some(t) => {
                        let args = [Arg::Js(agent_id), Arg::Val(&t), Arg::Val(&limit)];
                        if large {
                            exec::rows_text_numbered(conn, RECENT_FOR_AGENT_WITH_TOPICS_LARGE, 3, &args, &MESSAGE)
                        } else {
                            exec::rows_text(conn, RECENT_FOR_AGENT_WITH_TOPICS, &args, &MESSAGE)
                        }
                    }
                    None => {
                        let sql = if large {
                            RECENT_FOR_AGENT_LARGE
                        } else {
                            RECENT_FOR_AGENT
                        };
                        exec::rows_text(conn, sql, &[Arg::Js(agent_id), Arg::Val(&limit)], &MESSAGE)
                    }
                }
            })
        })
    }

    /// Compatibility stub: the message exists and an agent id was given.
    #[napi]
    pub fn deliver_to_agent(&self, env: Env, message_id: JsVal, agent_id: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            let found = exec::row_count(&core.conn, GET_MESSAGE, &[Arg::Js(message_id)])? > 0;
            Ok(found && agent_id.truthy())
        })
    }

    /// Compatibility stub: how many agents getAgentsByTopic(topic) returns.
    #[napi]
    pub fn deliver_to_topic(&self, env: Env, topic: JsVal) -> Result<u32> {
        self.with(&env, |core| {
            Ok(exec::row_count(&core.conn, AGENTS_BY_TOPIC, &[Arg::Js(topic)])? as u32)
        })
    }

    /// moveToDeadLetter: mark and record in one DEFERRED transaction; always true.
    #[napi]
    pub fn move_to_dead_letter(&self, env: Env, message_id: JsVal, reason: JsVal, last_error: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Deferred, || {
                let dead = Bound::text("dead_letter");
                exec::run_args(conn, SET_MESSAGE_STATUS, &[Arg::Val(&dead), Arg::Js(message_id)])?;
                let now_b = Bound::num(now() as f64);
                exec::run_args(
                    conn,
                    INSERT_DEAD_LETTER,
                    &[
                        Arg::Js(message_id),
                        Arg::Js(reason),
                        Arg::Val(&now_b),
                        Arg::Js(last_error),
                    ],
                )?;
                Ok(true)
            })
        })
    }

    #[napi]
    pub fn get_dead_letters(&self, env: Env, limit: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(
                &core.conn,
                "SELECT * FROM dead_letters ORDER BY failed_at_ms DESC LIMIT ?",
                &[Arg::Js(limit)],
                &RAW,
            )
        })
    }
}

/// The agent's topics as the original used them: `getAgent(id)?.topics || []`, then
/// only when `.length` is truthy. Returns the JSON text to hand to json_each.
fn agent_topics(conn: &rusqlite::Connection, agent_id: JsVal) -> crate::sqlite::error::SResult<Option<String>> {
    let Some(row) = read_row(conn, GET_AGENT, &[Arg::Js(agent_id)], &RAW)? else {
        return Ok(None);
    };
    let text = match row.get("topics_json") {
        Val::Str(t) | Val::Buffer(t) => String::from_utf8_lossy(&t).into_owned(),
        _ => return Ok(None),
    };
    if !is_valid_json(&text) {
        return Ok(None);
    }
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
    let has_length = match trimmed.as_bytes().first() {
        // A non-empty array, or a non-empty string (both truthy with a truthy length).
        Some(b'[') => !trimmed[1..]
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with(']'),
        Some(b'"') => trimmed != "\"\"",
        _ => false,
    };
    Ok(has_length.then(|| trimmed.to_string()))
}
