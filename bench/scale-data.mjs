// Scale benchmark data: a deterministic hub log of N messages, written once per size with
// better-sqlite3 (one transaction, the original schema), and a small "recent" part that every
// benchmark run refreshes so that the per-tick outputs are the same at every size.
//
// The log ("realistic"): N messages over 7 days, ending an hour before the file was made,
// 100 agents (10 of them subscribed to topics t1 and t2), 80% of messages addressed to an
// agent and 20% to `topic:tK`, 70% acked / 25% delivered / 5% dead-lettered (with their
// dead_letters rows), 1% carrying one of 50 role keys; N/1000 offline agents, N/100 resolved
// human requests, 200 assign jobs, 50 roles (5 of them with an expired holder lease).
// "bursts" (the worst case): the same, but every 500 consecutive messages share one
// created_at_ms, so every ORDER BY created_at_ms meets tie groups of 500.
// "queued" (a hub whose undelivered messages stay): 40% of the messages stay queued (their
// TTL of 30 days has not run out, so the timed sweepExpired leaves them), 30% acked, 25%
// delivered, 5% dead-lettered; N/10 assign jobs spread over the 7 days instead of 200
// (45% succeeded, 20% queued, 15% running, 10% failed, 10% timed out).
//
// Every run (refreshRecent) first deletes the previous run's recent rows, then appends: 300 messages acked in the last 2.5 minutes, the newest 40
// queued (TTL 1 h; 8 each to agent-007, topic:t1 and agent-042; 30 of the acked ones each
// to agent-042, agent-007 and topic:t2, so every limit-20 read returns recent rows only and
// its output is the same at every size), 10 queued role messages for
// role 0, and 5 pending human requests; it renews the 100 agents' leases.

import { encodeRoleKey } from './baseline.mjs';
import { loadReference } from '../tools/reference.mjs';

export const AGENTS = 100;
export const ROLES = 50;
export const DAY = 86_400_000;

/** Small deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (n, width) => n.toString(16).padStart(width, '0');

/** A v7-looking id that sorts by time, then by a counter (deterministic). */
function idAt(ms, counter, salt) {
  const t = hex(ms, 12);
  const c = counter >>> 0;
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${hex((c >>> 16) & 0xfff, 3)}-8${hex((c >>> 4) & 0xfff, 3)}-${hex(c & 0xf, 1)}${hex(salt >>> 0, 8)}000`;
}

export const agentId = (i) => `agent-${String(i).padStart(3, '0')}`;

/** The 50 role wires (valid `rk2.` keys: listPendingRoleMessages decodes its argument). */
export function roleWires() {
  const wires = [];
  for (let i = 0; i < ROLES; i++) {
    const project_id = `prj_${String(i).padStart(22, 'p')}`;
    wires.push(encodeRoleKey({ project_id, role_kind: 'cto' }));
  }
  return wires;
}

const MESSAGE_INSERT = `INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms,
  expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`;

/**
 * Writes the log into a fresh file with better-sqlite3 and the original schema (the file
 * must not exist). `now` is the generation time; the log ends an hour earlier.
 */
export function generate(path, n, { bursts = false, queued = false, schemaSql, now = Date.now() } = {}) {
  const Database = loadReference();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT)');
  db.exec(schemaSql);
  db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('schema_version', '6')").run();
  db.exec('CREATE TABLE bench_state (key TEXT PRIMARY KEY, value INTEGER)');
  const rand = rng(0x5ca1e + n + (bursts ? 1 : 0) + (queued ? 2 : 0));
  const wires = roleWires();
  const end = now - 3_600_000;
  const start = end - 7 * DAY;
  const step = (7 * DAY) / Math.max(1, n);
  const write = db.transaction(() => {
    const agent = db.prepare(`INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms,
      lease_expires_ms, status, metadata_json) VALUES (?,?,?,?,?,?,?,?,?)`);
    for (let i = 0; i < AGENTS; i++) {
      const topics = i < 10 ? '["t1","t2"]' : '[]';
      agent.run(agentId(i), 'codex', 1000 + i, '[]', topics, now, now + 3_600_000, 'online', '{}');
    }
    for (let i = 0; i < Math.floor(n / 1000); i++) {
      agent.run(`gone-${i}`, 'claude', null, '[]', '[]', start, start + 30_000, 'offline', '{}');
    }
    const msg = db.prepare(MESSAGE_INSERT);
    const dead = db.prepare('INSERT INTO dead_letters (message_id, reason, failed_at_ms, last_error) VALUES (?,?,?,?)');
    for (let i = 0; i < n; i++) {
      const created = bursts ? start + Math.floor(i / 500) * Math.floor(step * 500) : Math.floor(start + i * step);
      const r = rand();
      const toTopic = r < 0.2;
      const k = Math.floor(rand() * 10);
      const to = toTopic ? `topic:t${k}` : agentId(Math.floor(rand() * AGENTS));
      const s = rand();
      const status = queued
        ? s < 0.4 ? 'queued' : s < 0.7 ? 'acked' : s < 0.95 ? 'delivered' : 'dead_letter'
        : s < 0.7 ? 'acked' : s < 0.95 ? 'delivered' : 'dead_letter';
      const ttl = status === 'queued' ? 30 * DAY : 300_000;
      const pr = rand();
      const priority = pr < 0.8 ? 5 : pr < 0.9 ? 3 : 8;
      const wire = rand() < 0.01 ? wires[Math.floor(rand() * ROLES)] : null;
      const type = toTopic ? 'event' : i % 3 === 0 ? 'request' : i % 3 === 1 ? 'response' : 'event';
      const id = idAt(created, i, n);
      msg.run(id, type, agentId(i % AGENTS), to, `t${k}`, priority, ttl, created, created + ttl,
        idAt(created, i, 1), idAt(created, i, 2), `{"seq":${i},"kind":"audit"}`, status, wire);
      if (status === 'dead_letter') dead.run(id, 'ttl_expired', created + 300_000, null);
    }
    const human = db.prepare(`INSERT INTO human_requests (request_id, requester_agent, kind, prompt, schema_json, state,
      deadline_ms, default_action, correlation_id, trace_id, response_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)`);
    const states = ['accepted', 'declined', 'cancelled', 'timed_out'];
    for (let i = 0; i < Math.floor(n / 100); i++) {
      const at = Math.floor(start + i * step * 100);
      human.run(idAt(at, i, 7), agentId(i % AGENTS), 'approval', 'ok?', '{}', states[i % 4], at + 60_000, 'decline',
        idAt(at, i, 8), idAt(at, i, 9), null);
    }
    const job = db.prepare(`INSERT INTO assign_jobs (job_id, supervisor_agent, worker_agent, status, trace_id,
      correlation_id, created_at_ms, updated_at_ms, deadline_ms) VALUES (?,?,?,?,?,?,?,?,?)`);
    const jobStates = queued
      ? ['succeeded', 'succeeded', 'succeeded', 'queued', 'running', 'succeeded', 'failed', 'timed_out', 'succeeded', 'queued', 'running',
          'succeeded', 'queued', 'running', 'succeeded', 'failed', 'timed_out', 'succeeded', 'succeeded', 'queued']
      : ['succeeded', 'succeeded', 'failed', 'queued', 'running', 'timed_out'];
    const jobs = queued ? Math.floor(n / 10) : 200;
    for (let i = 0; i < jobs; i++) {
      const at = queued ? Math.floor(start + i * step * 10) : end;
      job.run(`job-${i}`, agentId(0), agentId(1 + (i % 20)), jobStates[i % jobStates.length], `tr-${i}`, `co-${i}`, at, at, at + 600_000);
    }
    const role = db.prepare(`INSERT INTO role_registry (role_key_wire, project_id, role_kind, scope_id, state,
      holder_agent_id, holder_lease_expires_ms, last_transition_ms, last_reason) VALUES (?,?,?,?,?,?,?,?,?)`);
    for (let i = 0; i < ROLES; i++) {
      const expired = i % 10 === 3;
      const held = i % 10 !== 7;
      role.run(wires[i], `prj_${String(i).padStart(22, 'p')}`, 'cto', '', held ? 'active' : 'electable',
        held ? agentId(i) : null, held ? (expired ? start : 4_102_444_800_000) : null, start, 'bench');
    }
    db.prepare("INSERT INTO bench_state (key, value) VALUES ('bursts', ?)").run(bursts ? 1 : 0);
    db.prepare("INSERT INTO bench_state (key, value) VALUES ('recent_from', (SELECT COALESCE(MAX(rowid), 0) + 1 FROM messages))").run();
  });
  write();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * Refreshes the recent part through `db` (a better-sqlite3 Database or this package's
 * `store.db`): the same statements on both sides, so both files stay alike.
 */
export function refreshRecent(db, now = Date.now()) {
  const wires = roleWires();
  db.transaction(() => {
    const from = db.prepare("SELECT value FROM bench_state WHERE key='recent_from'").pluck().get();
    const bursts = db.prepare("SELECT value FROM bench_state WHERE key='bursts'").pluck().get() === 1;
    // In the bursts case every group of recent rows shares one millisecond.
    const at = (t) => (bursts ? t - (t % 60_000) : t);
    // The previous run's recent rows go, so every run (and both sides) holds the same rows.
    db.prepare('DELETE FROM messages WHERE rowid >= ?').run(from);
    db.prepare("DELETE FROM human_requests WHERE correlation_id = 'bench-recent'").run();
    db.prepare(`UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id LIKE 'agent-%'`)
      .run(now, now + 3_600_000);
    const msg = db.prepare(MESSAGE_INSERT);
    let c = 0;
    const put = (created, to, status, ttl, wire = null) => {
      c += 1;
      const topic = to.startsWith('topic:') ? to.slice(6) : 't1';
      msg.run(idAt(created, c, now % 1e9), 'event', agentId(c % AGENTS), to, topic, c % 4 === 0 ? 8 : 5, ttl, created,
        created + ttl, idAt(created, c, 11), idAt(created, c, 12), `{"recent":${c}}`, status, wire);
    };
    const pick = [agentId(42), agentId(7), 'topic:t2'];
    for (let i = 0; i < 300; i++) put(at(now - 150_000 + i * 480), pick[i % 10] ?? agentId(i % AGENTS), 'acked', 300_000);
    for (let i = 0; i < 40; i++) {
      const to = [agentId(7), 'topic:t1', agentId(42)][i % 5] ?? agentId(50 + i);
      put(at(now - 40_000 + i * 1000), to, 'queued', 3_600_000);
    }
    for (let i = 0; i < 10; i++) put(at(now - 10_000 + i * 100), agentId(3), i % 2 ? 'queued' : 'delivered', 3_600_000, wires[0]);
    const human = db.prepare(`INSERT INTO human_requests (request_id, requester_agent, kind, prompt, schema_json, state,
      deadline_ms, default_action, correlation_id, trace_id, response_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)`);
    for (let i = 0; i < 5; i++) {
      human.run(idAt(now, i, 99), agentId(i), 'approval', 'ok?', '{}', 'pending', now + 3_600_000, 'decline', 'bench-recent', 't', null);
    }
  })();
}
