// The original store's per-tick methods (hub/store.mjs, schema "6"; SQL as in the v6 spec,
// §9), on a better-sqlite3 handle: the yardstick of bench/scale.mjs and the reference the
// tie-order tests compare against. Only these methods; nothing here is a store to use.

/**
 * The per-tick methods of the original store (v6 spec, §9), on a better-sqlite3 handle;
 * with `schema` 7 or 8, sweepStaleAgents as those originals have it (agent by agent,
 * under each one's presence generation).
 */
export function originalMethods(db, schema = 6) {
  const q = (sql) => db.prepare(sql);
  const parse = (t, fb) => {
    if (t == null) return fb;
    try {
      return JSON.parse(t);
    } catch {
      return fb;
    }
  };
  const messageRow = (r) => {
    const { payload_json, ...rest } = r;
    return { ...rest, payload: parse(payload_json, {}) };
  };
  const agentGet = q('SELECT * FROM agents WHERE agent_id = ?');
  const recent = q('SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC LIMIT ?');
  const recentTopics = q(`SELECT * FROM messages WHERE to_agent=?
      OR (substr(to_agent, 1, 6)='topic:' AND topic IN (SELECT value FROM json_each(?)))
      ORDER BY created_at_ms DESC LIMIT ?`);
  const count = (sql) => {
    const s = q(sql);
    return (...a) => s.get(...a).cnt;
  };
  const onlineAgents = count("SELECT COUNT(*) as cnt FROM agents WHERE status='online'");
  const totalMessages = count('SELECT COUNT(*) as cnt FROM messages');
  const dlq = count('SELECT COUNT(*) as cnt FROM dead_letters');
  const urgent = count("SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority >= 7");
  const normal = count("SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority < 7");
  const active = count("SELECT COUNT(*) as cnt FROM assign_jobs WHERE status IN ('queued','running')");
  const byStatus = count('SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = ?');
  const delivered = count("SELECT COUNT(*) as cnt FROM messages WHERE status='acked' AND created_at_ms > ? - 300000");
  const expiredIds = q("SELECT id FROM messages WHERE status='queued' AND expires_at_ms < ?");
  const setStatus = q('UPDATE messages SET status=? WHERE id=?');
  const deadLetter = q('INSERT OR REPLACE INTO dead_letters (message_id, reason, failed_at_ms, last_error) VALUES (?,?,?,?)');
  const expireHuman = q("UPDATE human_requests SET state='timed_out' WHERE state='pending' AND deadline_ms < ?");
  const toStale = q("UPDATE agents SET status='stale' WHERE status='online' AND lease_expires_ms < ?");
  const toOffline = q("UPDATE agents SET status='offline' WHERE status='stale' AND lease_expires_ms < ? - 300000");
  const expiredHolders = q(`SELECT * FROM role_registry WHERE holder_agent_id IS NOT NULL
      AND (holder_lease_expires_ms IS NULL OR holder_lease_expires_ms <= ?) ORDER BY role_key_wire`);
  const pending = q(`SELECT * FROM messages WHERE role_key_wire=? AND status IN ('queued','delivered') AND expires_at_ms > ?
      ORDER BY priority DESC, created_at_ms ASC, id`);
  const deadLetters = q('SELECT * FROM dead_letters ORDER BY failed_at_ms DESC LIMIT ?');
  const clamp = (v) => {
    const x = Math.trunc(Number(v));
    return Number.isFinite(x) ? Math.max(1, Math.min(100, x)) : 20;
  };
  const audit = (agent, { max_messages = 20, include_topics = null } = {}) => {
    const limit = clamp(max_messages);
    const topics = Array.isArray(include_topics) && include_topics.length
      ? include_topics
      : parse(agentGet.get(agent)?.topics_json, []) || [];
    const rows = topics.length ? recentTopics.all(agent, JSON.stringify(topics), limit) : recent.all(agent, limit);
    return rows.map(messageRow);
  };
  const sweep = db.transaction(() => {
    const now = Date.now();
    const ids = expiredIds.all(now);
    for (const { id } of ids) {
      setStatus.run('dead_letter', id);
      deadLetter.run(id, 'ttl_expired', now, null);
    }
    return { messages: ids.length, human_requests: expireHuman.run(now).changes };
  });
  return {
    getAuditMessagesForAgent: audit,
    pollForAgent: audit,
    getDeliveryStats: () => ({ total_deliveries: delivered(Date.now()), avg_delivery_ms: 0 }),
    sweepExpired: () => sweep(),
    getQueueDepths: () => ({ urgent: urgent(), normal: normal(), dlq: dlq() }),
    getHubStats: () => ({
      online_agents: onlineAgents(),
      total_messages: totalMessages(),
      active_assign_jobs: active(),
      urgent: urgent(),
      normal: normal(),
      dlq: dlq(),
    }),
    getAuditStats: () => ({
      online_agents: onlineAgents(),
      total_messages: totalMessages(),
      dlq: dlq(),
      assign_queued: byStatus('queued'),
      assign_running: byStatus('running'),
      assign_failed: byStatus('failed'),
      assign_timed_out: byStatus('timed_out'),
    }),
    expireHumanRequests: () => expireHuman.run(Date.now()).changes,
    sweepStaleAgents: schema >= 7 ? fencedSweep(db) : () => {
      const now = Date.now();
      return { stale: toStale.run(now).changes, offline: toOffline.run(now).changes };
    },
    listRolesWithExpiredHolder: (now) => expiredHolders.all(now),
    listPendingRoleMessages: (wire, now) => pending.all(wire, now).map(messageRow),
    getDeadLetters: (limit = 50) => deadLetters.all(limit),
  };
}

/** The schema 7/8 originals' sweepStaleAgents. */
function fencedSweep(db) {
  const all = db.prepare('SELECT * FROM agents');
  const markStale = db.prepare("UPDATE agents SET status='stale' WHERE agent_id=? AND presence_generation=? AND status='online' AND lease_expires_ms < ?");
  const markOffline = db.prepare(
    "UPDATE agents SET status='offline' WHERE agent_id=? AND presence_generation=? AND status='stale' AND lease_expires_ms < ? - 300000",
  );
  return () => {
    const now = Date.now();
    let stale = 0;
    let offline = 0;
    for (const a of all.all()) {
      if (a.status === 'online' && a.lease_expires_ms < now) stale += markStale.run(a.agent_id, a.presence_generation, now).changes;
      else if (a.status === 'stale' && a.lease_expires_ms < now - 300000) offline += markOffline.run(a.agent_id, a.presence_generation, now).changes;
    }
    return { stale, offline };
  };
}
