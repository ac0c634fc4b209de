// What the schema "7" and "8" originals changed in the methods the baseline times (their
// statements, binding and row handling, as bench/baseline.mjs does for schema "6"): the
// open-time column and triggers, the generation-fenced agent writes, the per-agent sweep,
// compareAndSetRole in BEGIN IMMEDIATE. bench/baseline.mjs applies it for --schema 7 / 8.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { agentRow, uuidv7 } from './baseline-parts.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** The v8 original's triggers, as the addon creates them (verbatim upstream text). */
const ROLE_INTEGRITY_SQL = readFileSync(join(here, '..', 'src', 'store', 'role_integrity.sql'), 'utf8');

const fingerprintOf = (dbPath) => `sqlite:${createHash('sha256').update(String(dbPath)).digest('hex')}`;

/** The open-time steps after schema.sql: ensureV7Columns, and in v8 the integrity triggers. */
export function openLaterSchema(db, schema) {
  if (!db.pragma('table_info(agents)').some((c) => c.name === 'presence_generation')) {
    db.exec('ALTER TABLE agents ADD COLUMN presence_generation INTEGER NOT NULL DEFAULT 0');
  }
  if (schema >= 8) db.exec(ROLE_INTEGRITY_SQL);
}

/** The v7/v8 originals' agent methods the bench times, on `db`. */
export function laterAgentMethods(db, dbPath) {
  const q = (sql) => db.prepare(sql);
  const st = {
    upsert: q(`INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, presence_generation, status, metadata_json)
      VALUES (@agent_id, @cli, @pid, @capabilities_json, @topics_json, @last_seen_ms, @lease_expires_ms, 1, @status, @metadata_json)
      ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
        topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
        presence_generation=agents.presence_generation + 1, status=excluded.status, metadata_json=excluded.metadata_json`),
    get: q('SELECT * FROM agents WHERE agent_id = ?'),
    beat: q("UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=? AND presence_generation=?"),
    setStatus: q('UPDATE agents SET status=? WHERE agent_id=? AND presence_generation=?'),
    all: q('SELECT * FROM agents'),
    markStale: q("UPDATE agents SET status='stale' WHERE agent_id=? AND presence_generation=? AND status='online' AND lease_expires_ms < ?"),
    markOffline: q("UPDATE agents SET status='offline' WHERE agent_id=? AND presence_generation=? AND status='stale' AND lease_expires_ms < ? - 300000"),
  };
  return {
    registerAgent({ agent_id, cli, pid, capabilities = [], topics = [], heartbeat_ttl_ms = 30000, metadata = {} }) {
      const now = Date.now();
      const lease = now + heartbeat_ttl_ms;
      const leaseId = uuidv7();
      const info = st.upsert.run({
        agent_id,
        cli,
        pid: pid ?? null,
        capabilities_json: JSON.stringify(capabilities),
        topics_json: JSON.stringify(topics),
        last_seen_ms: now,
        lease_expires_ms: lease,
        status: 'online',
        metadata_json: JSON.stringify(metadata),
      });
      const saved = agentRow(st.get.get(agent_id));
      return {
        agent_id,
        lease_id: leaseId,
        presence_generation: saved?.presence_generation ?? null,
        lease_expires_ms: lease,
        server_time_ms: now,
        effective: {
          updated: info.changes > 0,
          online: saved?.status === 'online' && Number(saved.lease_expires_ms) === lease,
          status: saved?.status ?? null,
          last_seen_ms: saved?.last_seen_ms ?? null,
          lease_expires_ms: saved?.lease_expires_ms ?? null,
          store_type: 'sqlite',
          db_path: dbPath ?? null,
          store_fingerprint: fingerprintOf(dbPath),
        },
      };
    },
    refreshLease(agentId, ttlMs = 30000, presenceGeneration) {
      const now = Date.now();
      const info = st.beat.run(now, now + ttlMs, agentId, presenceGeneration);
      return {
        agent_id: agentId,
        lease_expires_ms: now + ttlMs,
        server_time_ms: now,
        effective: { updated: info.changes > 0, store_type: 'sqlite', db_path: dbPath ?? null, store_fingerprint: fingerprintOf(dbPath) },
      };
    },
    updateAgentStatus(agentId, status, presenceGeneration) {
      return st.setStatus.run(status, agentId, presenceGeneration).changes > 0;
    },
    sweepStaleAgents() {
      const now = Date.now();
      let stale = 0;
      let offline = 0;
      for (const a of st.all.all()) {
        if (a.status === 'online' && a.lease_expires_ms < now) stale += st.markStale.run(a.agent_id, a.presence_generation, now).changes;
        else if (a.status === 'stale' && a.lease_expires_ms < now - 300000) offline += st.markOffline.run(a.agent_id, a.presence_generation, now).changes;
      }
      return { stale, offline };
    },
  };
}
