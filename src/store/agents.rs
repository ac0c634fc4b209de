//! Agents: registration, leases, topics and the status sweeps.

use super::rows::AGENT;
use super::stmt::Stmt;

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "upsertAgent",
        "INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, status, metadata_json)
 VALUES (@agent_id, @cli, @pid, @capabilities_json, @topics_json, @last_seen_ms, @lease_expires_ms, @status, @metadata_json)
 ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
 topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
 status=excluded.status, metadata_json=excluded.metadata_json",
    ),
    Stmt::new("getAgent", "SELECT * FROM agents WHERE agent_id = ?").rows(&AGENT),
    Stmt::new("setAgentTopics", "UPDATE agents SET topics_json=?, last_seen_ms=? WHERE agent_id=?"),
    Stmt::new("heartbeat", "UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=?"),
    // The heartbeat of an agent that is already online: the same row change without
    // rewriting `status`, which would also rewrite its index entry (~25% more WAL bytes).
    Stmt::new("heartbeatOnline", "UPDATE agents SET last_seen_ms=?, lease_expires_ms=? WHERE agent_id=? AND status='online'"),
    Stmt::new("setAgentStatus", "UPDATE agents SET status=? WHERE agent_id=?"),
    Stmt::new("onlineAgents", "SELECT * FROM agents WHERE status != 'offline'").rows(&AGENT),
    Stmt::new("allAgents", "SELECT * FROM agents").rows(&AGENT),
    Stmt::new(
        "agentsByTopic",
        "SELECT a.* FROM agents a, json_each(a.topics_json) t WHERE t.value=? AND a.status != 'offline'",
    )
    .rows(&AGENT),
    Stmt::new("markStale", "UPDATE agents SET status='stale' WHERE status='online' AND lease_expires_ms < ?"),
    Stmt::new("markOffline", "UPDATE agents SET status='offline' WHERE status='stale' AND lease_expires_ms < ? - 300000"),
];
