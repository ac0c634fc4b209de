'use strict';
// Agents: registration, leases, topics and the status sweeps.

const { atomic } = require('./statements.cjs');

function agentMethods({ S, n, dbPath, uuidv7 }) {
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
      return {
        agent_id,
        lease_id: leaseId,
        lease_expires_ms: leaseExpires,
        server_time_ms: now,
        effective: {
          updated: write.changes > 0,
          online: persisted?.status === 'online' && Number(persisted.lease_expires_ms) === leaseExpires,
          status: persisted?.status ?? null,
          last_seen_ms: persisted?.last_seen_ms ?? null,
          lease_expires_ms: persisted?.lease_expires_ms ?? null,
          store_type: 'sqlite',
          db_path: dbPath ?? null,
        },
      };
    },

    getAgent(id) {
      return S.getAgent.get(id) ?? null;
    },

    refreshLease(agentId, ttlMs = 30000) {
      const now = Date.now();
      const leaseExpires = now + ttlMs;
      // An online agent's heartbeat leaves `status` (and its index entry) alone; any
      // other agent is revived by the original statement. Same row, same change count.
      let write = S.heartbeatOnline.run(now, leaseExpires, agentId);
      if (write.changes === 0) write = S.heartbeat.run(now, leaseExpires, agentId);
      return {
        agent_id: agentId,
        lease_expires_ms: now + ttlMs,
        server_time_ms: now,
        effective: { updated: write.changes > 0, store_type: 'sqlite', db_path: dbPath ?? null },
      };
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
      return { stale: S.markStale.run(now).changes, offline: S.markOffline.run(now).changes };
    },

    updateAgentStatus(agentId, status) {
      return S.setAgentStatus.run(status, agentId).changes > 0;
    },
  };
}

module.exports = { agentMethods };
