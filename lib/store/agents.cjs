'use strict';
// Agents: registration, leases, topics and the status sweeps.
//
// Schema 7 (`fenced`) fences a stale agent: registerAgent bumps the row's
// presence_generation and returns it, and refreshLease / updateAgentStatus take the
// generation as their last argument and only write the row of that generation (their
// statements add `AND presence_generation=?`, src/store/agents.rs). The argument is
// bound as passed: `undefined` binds NULL and matches no row, as in the original.

const { atomic } = require('./statements.cjs');

function agentMethods({ S, n, dbPath, uuidv7, schema, fingerprint }) {
  const { fenced } = schema;
  return {
    registerAgent({ agent_id, cli, pid, capabilities = [], topics = [], heartbeat_ttl_ms = 30000, metadata = {} }) {
      const now = Date.now();
      const leaseExpires = now + heartbeat_ttl_ms;
      const leaseId = uuidv7(); // returned, never stored
      const row = {
        agent_id,
        cli,
        pid: pid ?? null,
        capabilities_json: JSON.stringify(capabilities),
        topics_json: JSON.stringify(topics),
        last_seen_ms: now,
        lease_expires_ms: leaseExpires,
        status: 'online',
        metadata_json: JSON.stringify(metadata),
      };
      const [write, persisted] = atomic(n, () => [S.upsertAgent.run(row), S.getAgent.get(agent_id) ?? null]);
      const effective = {
        updated: write.changes > 0,
        online: persisted?.status === 'online' && Number(persisted.lease_expires_ms) === leaseExpires,
        status: persisted?.status ?? null,
        last_seen_ms: persisted?.last_seen_ms ?? null,
        lease_expires_ms: persisted?.lease_expires_ms ?? null,
        store_type: 'sqlite',
        db_path: dbPath ?? null,
      };
      if (!fenced) return { agent_id, lease_id: leaseId, lease_expires_ms: leaseExpires, server_time_ms: now, effective };
      effective.store_fingerprint = fingerprint;
      return {
        agent_id,
        lease_id: leaseId,
        presence_generation: persisted?.presence_generation ?? null,
        lease_expires_ms: leaseExpires,
        server_time_ms: now,
        effective,
      };
    },

    getAgent(id) {
      return S.getAgent.get(id) ?? null;
    },

    refreshLease(agentId, ttlMs = 30000, presenceGeneration) {
      const now = Date.now();
      const leaseExpires = now + ttlMs;
      // An online agent's heartbeat leaves `status` (and its index entry) alone; any
      // other agent is revived by the original statement. Same row, same change count.
      let write;
      if (fenced) {
        write = S.heartbeatOnline.run(now, leaseExpires, agentId, presenceGeneration);
        if (write.changes === 0) write = S.heartbeat.run(now, leaseExpires, agentId, presenceGeneration);
      } else {
        write = S.heartbeatOnline.run(now, leaseExpires, agentId);
        if (write.changes === 0) write = S.heartbeat.run(now, leaseExpires, agentId);
      }
      const effective = { updated: write.changes > 0, store_type: 'sqlite', db_path: dbPath ?? null };
      if (fenced) effective.store_fingerprint = fingerprint;
      return { agent_id: agentId, lease_expires_ms: now + ttlMs, server_time_ms: now, effective };
    },

    updateAgentTopics(agentId, topics = []) {
      const now = Date.now();
      return S.setAgentTopics.run(JSON.stringify(topics), now, agentId).changes > 0;
    },

    listOnlineAgents() {
      return S.onlineAgents.all();
    },

    listAllAgents() {
      return S.allAgents.all();
    },

    getAgentsByTopic(topic) {
      return S.agentsByTopic.all(topic);
    },

    sweepStaleAgents() {
      const now = Date.now();
      if (!fenced) return { stale: S.markStale.run(now).changes, offline: S.markOffline.run(now).changes };
      // Schema 7 reads every agent and marks each one at most one step under the
      // generation it read (online and expired -> stale, else stale and expired five
      // minutes -> offline). In one transaction nothing can re-register an agent between
      // that read and the write, so every guard matches: two set-wise updates change the
      // same rows, offline first (an agent made stale now is not also made offline).
      return atomic(n, () => {
        const offline = S.markOffline.run(now).changes;
        return { stale: S.markStale.run(now).changes, offline };
      });
    },

    updateAgentStatus(agentId, status, presenceGeneration) {
      if (fenced) return S.setAgentStatus.run(status, agentId, presenceGeneration).changes > 0;
      return S.setAgentStatus.run(status, agentId).changes > 0;
    },
  };
}

module.exports = { agentMethods };
