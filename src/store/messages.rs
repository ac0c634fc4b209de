//! Messages: the audit log, lookups, status changes, the replay for agents, and the
//! dead-letter queue.

use super::parsed_rows::{MESSAGE, PLAIN};
use super::stmt::{Effect, Stmt};

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "insertAuditMessage",
        "INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire)
 VALUES (@id, @type, @from_agent, @to_agent, @topic, @priority, @ttl_ms, @created_at_ms, @expires_at_ms, @correlation_id, @trace_id, @payload_json, @status, @role_key_wire)",
    )
    .effect(Effect::InsertsMessage),
    Stmt::new("getMsg", "SELECT * FROM messages WHERE id=?").rows(&MESSAGE),
    Stmt::new(
        "getResponse",
        "SELECT * FROM messages WHERE correlation_id=? AND type='response' ORDER BY created_at_ms DESC LIMIT 1",
    )
    .rows(&MESSAGE),
    Stmt::new("getMsgsByTrace", "SELECT * FROM messages WHERE trace_id=? ORDER BY created_at_ms").rows(&MESSAGE),
    Stmt::new("setMsgStatus", "UPDATE messages SET status=? WHERE id=?"),
    // Newest first for one recipient: the original's statements, run as they are while the
    // log is small (src/store/scale.rs), and their rewrites for the large-log indexes. Both
    // give the same rows in the same order, ties included:
    // * without topics, the original's plan read idx_messages_to_agent(to_agent, status) and
    //   sorted by created_at_ms with a sort that keeps the scan order for ties, so rows with
    //   equal created_at_ms came back by status (text order), then rowid;
    // * with topics, it scanned the whole table (the OR has no index), so ties came back by
    //   rowid.
    Stmt::new("recentAgentMessages", "SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC LIMIT ?")
        .rows(&MESSAGE)
        .effect(Effect::TickRead)
        // The rule spelled out; idx_messages_to_agent_recent(to_agent, created_at_ms DESC,
        // status) holds exactly this order (an index ends with the rowid, ascending), so the
        // rows come straight off the index: O(log n + limit).
        .large("SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC, status, rowid LIMIT ?"),
    Stmt::new(
        "recentAgentMessagesWithTopics",
        "SELECT * FROM messages WHERE to_agent=?
 OR (substr(to_agent, 1, 6)='topic:' AND topic IN (SELECT value FROM json_each(?)))
 ORDER BY created_at_ms DESC LIMIT ?",
    )
    .rows(&MESSAGE)
    .effect(Effect::TickRead)
    // The recipient's newest ?3 (by created_at_ms, then rowid) and each topic's newest ?3
    // from idx_messages_topic_recent (partial: `topic:` rows only), then the newest ?3 of
    // their union: O(topics × log n + limit). `topic = value` compares as `topic IN (SELECT
    // value …)` did (the column's TEXT affinity applies to the JSON values); a row found
    // twice counts once.
    .large(
        "SELECT * FROM messages WHERE rowid IN (
   SELECT r FROM (SELECT rowid AS r FROM messages WHERE to_agent = ?1 ORDER BY created_at_ms DESC, rowid LIMIT ?3)
   UNION ALL
   SELECT m.rowid FROM (SELECT DISTINCT value AS v FROM json_each(?2)) t, messages m
    WHERE m.rowid IN (SELECT rowid FROM messages
                       WHERE topic = t.v AND substr(to_agent, 1, 6) = 'topic:'
                       ORDER BY created_at_ms DESC, rowid LIMIT ?3))
 ORDER BY created_at_ms DESC, rowid LIMIT ?3",
    ),
];

pub(super) const DEAD_LETTER_STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "insertDL",
        "INSERT OR REPLACE INTO dead_letters (message_id, reason, failed_at_ms, last_error) VALUES (?,?,?,?)",
    ),
    Stmt::new("getDL", "SELECT * FROM dead_letters ORDER BY failed_at_ms DESC LIMIT ?").rows(&PLAIN),
];
