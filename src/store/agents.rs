//! Agents: registration, leases, topics and the status sweeps. From schema 7 on, the
//! writes of one incarnation of an agent name its presence generation (`registerAgent`
//! bumps it), so a heartbeat or status write of an earlier one changes nothing.

use super::parsed_rows::AGENT;
use super::stmt::Stmt;
use crate::store::schema::SchemaVersion::{V6, V7};

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "upsertAgent",
        "INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, status, metadata_json)
 VALUES (@agent_id, @cli, @pid, @capabilities_json, @topics_json, @last_seen_ms, @lease_expires_ms, @status, @metadata_json)
 ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
 topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
 status=excluded.status, metadata_json=excluded.metadata_json",
    )
    .until(V6),
    Stmt::new(
        "upsertAgent",
        "INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, presence_generation, status, metadata_json)
 VALUES (@agent_id, @cli, @pid, @capabilities_json, @topics_json, @last_seen_ms, @lease_expires_ms, 1, @status, @metadata_json)
 ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
 topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
 presence_generation=agents.presence_generation + 1, status=excluded.status, metadata_json=excluded.metadata_json",
    )
    .since(V7),
    Stmt::new("getAgent", "SELECT * FROM agents WHERE agent_id = ?").rows(&AGENT),
    Stmt::new("setAgentTopics", "UPDATE agents SET topics_json=?, last_seen_ms=? WHERE agent_id=?"),
    Stmt::new("heartbeat", "UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=?").until(V6),
    Stmt::new(
        "heartbeat",
        "UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=? AND presence_generation=?",
    )
    .since(V7),
    // The heartbeat of an agent that is already online: the same row change without
    // rewriting `status`, which would also rewrite its index entry (~25% more WAL bytes).
    Stmt::new("heartbeatOnline", "UPDATE agents SET last_seen_ms=?, lease_expires_ms=? WHERE agent_id=? AND status='online'").until(V6),
    Stmt::new(
        "heartbeatOnline",
        "UPDATE agents SET last_seen_ms=?, lease_expires_ms=? WHERE agent_id=? AND presence_generation=? AND status='online'",
    )
    .since(V7),
    Stmt::new("setAgentStatus", "UPDATE agents SET status=? WHERE agent_id=?").until(V6),
    Stmt::new("setAgentStatus", "UPDATE agents SET status=? WHERE agent_id=? AND presence_generation=?").since(V7),
    Stmt::new("onlineAgents", "SELECT * FROM agents WHERE status != 'offline'").rows(&AGENT),
    Stmt::new("allAgents", "SELECT * FROM agents").rows(&AGENT),
    Stmt::new(
        "agentsByTopic",
        "SELECT a.* FROM agents a, json_each(a.topics_json) t WHERE t.value=? AND a.status != 'offline'",
    )
    .rows(&AGENT),
    // Schema 7 sweeps agent by agent, each under its own generation; lib/store/agents.cjs
    // runs these two in one transaction instead, offline first (the same rows change).
    Stmt::new("markStale", "UPDATE agents SET status='stale' WHERE status='online' AND lease_expires_ms < ?"),
    Stmt::new("markOffline", "UPDATE agents SET status='offline' WHERE status='stale' AND lease_expires_ms < ? - 300000"),
];
