// The benchmark's cases (bench/run.mjs runs them): the rows every side's file is seeded
// with, identical on every side, and per method the call that is timed. `op(store)`
// returns the per-call function `(i) => result`; it runs unchanged on every side.

import { encodeRoleKey, uuidv7 } from './baseline.mjs';

const pad = (n, w) => String(n).padStart(w, '0');
const NOW = Date.now();
const FAR = NOW + 1e10;

// ---------------------------------------------------------------- seed data (identical in both files)

const AGENTS = Array.from({ length: 100 }, (_, i) => `agent-${pad(i, 3)}`);
const MESSAGE_IDS = Array.from({ length: 2000 }, () => uuidv7());
const TARGETS = ['topic:build', 'topic:deploy', 'topic:misc'];
const JOB_IDS = Array.from({ length: 1000 }, (_, i) => `job-${pad(i, 4)}`);
const PATTERNS = Array.from({ length: 100 }, (_, i) => `TypeError: cannot read property x${i} of undefined`);

const ROLE_KEYS = Array.from({ length: 50 }, (_, i) => {
  const project_id = `prj_benchproject${pad(i % 10, 10)}`;
  return i < 10
    ? encodeRoleKey({ project_id, role_kind: 'cto' })
    : encodeRoleKey({ project_id, role_kind: 'lead', scope_id: `scp_benchscope${pad(i, 12)}` });
});
const ROLE_ACTIVATION = ROLE_KEYS.map(() => uuidv7());

/** Role i's seeded shape: 20 live holders, 10 expired holders, 10 orphaned activations, 10 idle. */
function roleSeed(i) {
  if (i < 20) return { state: 'active', holder: AGENTS[i], lease: FAR, activation: ROLE_ACTIVATION[i] };
  if (i < 30) return { state: 'active', holder: AGENTS[i], lease: 1, activation: ROLE_ACTIVATION[i] };
  if (i < 40) return { state: 'elected-probing', holder: null, lease: null, activation: ROLE_ACTIVATION[i] };
  return { state: 'electable', holder: null, lease: null, activation: null };
}

export const SEEDS = {
  agents(db) {
    const ins = db.prepare(`INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms,
      lease_expires_ms, status, metadata_json) VALUES (?, 'claude', ?, ?, ?, ?, ?, 'online', ?)`);
    AGENTS.forEach((id, i) =>
      ins.run(id, 1000 + i, '["code","review","test"]', '["build","deploy"]', NOW, NOW + 30000,
        JSON.stringify({ host: 'bench-host', slot: i, tags: ['a', 'b'] })));
  },
  messages(db) {
    const ins = db.prepare(`INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms,
      expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire) VALUES (?, 'event', ?, ?, ?, ?, 300000, ?, ?, ?, ?, ?, 'queued', NULL)`);
    MESSAGE_IDS.forEach((id, i) => {
      const to = i % 4 === 3 ? TARGETS[i % 3] : AGENTS[i % 10];
      const topic = to.startsWith('topic:') ? to.slice(6) : 'direct';
      ins.run(id, AGENTS[(i + 1) % 10], to, topic, 1 + (i % 9), NOW - 2000 + i, FAR, `c-${i}`, `t-${i % 50}`,
        JSON.stringify({ kind: 'note', n: i, text: 'benchmark payload text', list: [1, 2, 3] }));
    });
  },
  assigns(db) {
    const ins = db.prepare(`INSERT INTO assign_jobs (job_id, supervisor_agent, worker_agent, topic, task, payload_json, status,
      attempt, retry_count, max_retries, priority, ttl_ms, timeout_ms, deadline_ms, trace_id, correlation_id,
      last_message_id, result_json, error_json, created_at_ms, updated_at_ms, started_at_ms, dispatched_at_ms,
      completed_at_ms, last_retry_at_ms) VALUES (?, ?, ?, 'assign.job', ?, ?, 'queued', 1, 0, 2, 5, 600000, 600000, ?,
      ?, ?, NULL, NULL, NULL, ?, ?, NULL, NULL, NULL, NULL)`);
    JOB_IDS.forEach((id, i) =>
      ins.run(id, `sup-${i % 4}`, `w-${i % 10}`, `task ${i}`, JSON.stringify({ prompt: `do step ${i}`, files: ['a.js', 'b.js'] }),
        NOW + 600000, `t-${i}`, `c-${i}`, NOW - 1000 + i, NOW - 1000 + i));
  },
  reflexion(db) {
    const ins = db.prepare(`INSERT INTO reflexion_entries (id, type, error_pattern, error_message, context_json, solution,
      solution_code, adaptive_state_json, confidence, hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms)
      VALUES (?, 'reflexion', ?, ?, ?, ?, NULL, ?, ?, 1, 0, ?, ?, ?)`);
    for (let i = 0; i < 500; i++) {
      ins.run(uuidv7(), PATTERNS[i % 100], `${PATTERNS[i % 100]} at line ${i}`,
        JSON.stringify({ file: `src/f${i % 7}.js`, cli: i % 2 ? 'codex' : 'claude' }), `fix ${i}`,
        JSON.stringify({ project_slug: 'bench' }), (i % 10) / 10, NOW, NOW, NOW);
    }
  },
  roles(db) {
    const ins = db.prepare(`INSERT INTO role_registry (role_key_wire, project_id, role_kind, scope_id, state, holder_agent_id,
      previous_holder_agent_id, epoch, activation_seq, activation_id, activation_deadline_ms, holder_lease_expires_ms,
      charter_version, charter_acked_epoch, retry_count, next_probe_ms, blocked_reason, last_transition_ms, last_reason, version)
      VALUES (?, ?, ?, ?, ?, ?, NULL, 0, 0, ?, NULL, ?, 'v1', NULL, 0, NULL, NULL, ?, 'seeded', 0)`);
    const cand = db.prepare(`INSERT INTO role_candidates (role_key_wire, agent_id, source, priority, transport_locators_json,
      consecutive_probe_failures, excluded_until_ms, last_probe_ms, last_probe_code, updated_at_ms)
      VALUES (?, ?, 'grant', ?, ?, 0, NULL, NULL, NULL, ?)`);
    const msg = db.prepare(`INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms,
      expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire)
      VALUES (?, 'request', 'agent-099', ?, 'role', 5, 300000, ?, ?, ?, ?, '{"ask":"status"}', 'queued', ?)`);
    ROLE_KEYS.forEach((wire, i) => {
      const key = JSON.parse(Buffer.from(wire.slice(4), 'base64url').toString('utf8'));
      const s = roleSeed(i);
      ins.run(wire, key.project_id, key.role_kind, key.scope_id ?? '', s.state, s.holder, s.activation, s.lease, NOW);
      for (let c = 0; c < 2; c++) {
        cand.run(wire, AGENTS[(i + c) % 100], 10 - c, JSON.stringify([{ kind: 'pipe', path: `/run/tfx/${i}-${c}.sock` }]), NOW);
      }
      if (i % 5 === 0) {
        for (let m = 0; m < 2; m++) msg.run(uuidv7(), `topic:role:${wire}`, NOW + m, FAR, `rc-${i}-${m}`, `rt-${i}`, wire);
      }
    });
  },
  meta(db) {
    const ins = db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)');
    for (let i = 0; i < 100; i++) ins.run(`bench.key.${i}`, JSON.stringify({ fingerprint: i, at: NOW }));
  },
};

// ---------------------------------------------------------------- cases
// `op(store, ctx)` returns the per-call function `(i) => result`; it runs unchanged on both sides.


function mustOk(r) {
  if (!r || r.ok !== true) throw new Error(`expected ok:true, got ${JSON.stringify(r)?.slice(0, 200)}`);
  return r;
}

export const CASES = [
  // agents and messages
  { name: 'registerAgent', area: 'agents', seeds: ['agents'], op: (s) => (i) => s.registerAgent({
    agent_id: AGENTS[i % 100], cli: 'codex', pid: 4242, capabilities: ['code', 'review'], topics: ['build', 'deploy'],
    heartbeat_ttl_ms: 30000, metadata: { host: 'bench-host', slot: i % 100 } }) },
  // The generation of a seeded agent (the column default in schema 7 and 8; schema 6 ignores the argument).
  { name: 'refreshLease', area: 'agents', seeds: ['agents'], op: (s) => (i) => s.refreshLease(AGENTS[i % 100], 30000, 0) },
  { name: 'updateAgentStatus', area: 'agents', seeds: ['agents'], op: (s) => (i) =>
    s.updateAgentStatus(AGENTS[i % 100], Math.floor(i / 100) % 2 ? 'online' : 'stale', 0) },
  // Each call finds 10 expired online agents (refreshed back by the call before) to mark stale.
  { name: 'sweepStaleAgents', area: 'agents', seeds: ['agents'], op: (s) => {
    const expire = s.db.prepare("UPDATE agents SET status = 'online', lease_expires_ms = ? WHERE agent_id IN (SELECT agent_id FROM agents ORDER BY agent_id LIMIT 10 OFFSET ?)");
    return (i) => {
      expire.run(NOW - 1000, (i * 10) % 100);
      return s.sweepStaleAgents();
    };
  } },
  { name: 'getAgent', area: 'agents', seeds: ['agents'], op: (s) => (i) => s.getAgent(AGENTS[i % 100]) },
  { name: 'auditLog', area: 'messages', seeds: ['agents'], op: (s) => (i) => s.auditLog({
    type: 'event', from: AGENTS[i % 10], to: AGENTS[(i + 1) % 10], topic: 'build', priority: 5,
    payload: { kind: 'note', n: i, text: 'benchmark payload text' } }) },
  { name: 'getMessage', area: 'messages', seeds: ['messages'], op: (s) => (i) => s.getMessage(MESSAGE_IDS[(i * 7) % 2000]) },
  { name: 'getAuditMessagesForAgent', area: 'messages', seeds: ['agents', 'messages'],
    op: (s) => (i) => s.getAuditMessagesForAgent(AGENTS[i % 10], { max_messages: 20 }) },

  // assign jobs and reflexion
  { name: 'createAssign', area: 'assign', seeds: [], op: (s) => (i) => s.createAssign({
    supervisor_agent: `sup-${i % 4}`, worker_agent: `w-${i % 10}`, task: 'bench task',
    payload: { prompt: 'do the thing', files: ['a.js', 'b.js'] }, priority: 5 }) },
  { name: 'getAssign', area: 'assign', seeds: ['assigns'], op: (s) => (i) => s.getAssign(JOB_IDS[(i * 7) % 1000]) },
  { name: 'updateAssignStatus', area: 'assign', seeds: ['assigns'], op: (s) => (i) =>
    s.updateAssignStatus(JOB_IDS[i % 1000], Math.floor(i / 1000) % 2 ? 'queued' : 'running', { result: { step: i } }) },
  { name: 'listAssigns', area: 'assign', seeds: ['assigns'], op: (s) => (i) =>
    s.listAssigns({ worker_agent: `w-${i % 10}`, statuses: ['queued', 'running'], limit: 20 }) },
  { name: 'addReflexion', area: 'reflexion', seeds: [], op: (s) => (i) => s.addReflexion({
    error_pattern: `Error: bench pattern ${i % 50}`, error_message: 'Error: bench pattern at line 1',
    context: { file: 'src/x.js', cli: 'codex' }, solution: 'apply the fix' }) },
  { name: 'findReflexion', area: 'reflexion', seeds: ['reflexion'], op: (s) => (i) => s.findReflexion(PATTERNS[i % 100]) },
  { name: 'findReflexion+ctx', method: 'findReflexion', area: 'reflexion', seeds: ['reflexion'],
    op: (s) => (i) => s.findReflexion(PATTERNS[i % 100], { cli: 'codex' }) },

  // role registry
  { name: 'getRole', area: 'roles', seeds: ['roles'], op: (s) => (i) => s.getRole(ROLE_KEYS[i % 50]) },
  { name: 'upsertRoleReservation', area: 'roles', seeds: ['roles'], op: (s) => (i) => mustOk(s.upsertRoleReservation({
    role_key_wire: ROLE_KEYS[i % 50], holder_agent_id: AGENTS[i % 7], holder_lease_expires_ms: FAR,
    last_reason: 'bench_reserve' })) },
  { name: 'compareAndSetRole', area: 'roles', seeds: ['roles'], op: (s) => {
    const known = ROLE_KEYS.map((_, i) => ({ version: 0, epoch: 0, seq: 0, aid: roleSeed(i).activation }));
    return (i) => {
      const k = known[i % 50];
      const r = mustOk(s.compareAndSetRole({
        role_key_wire: ROLE_KEYS[i % 50], expected_version: k.version, expected_epoch: k.epoch,
        expected_activation_seq: k.seq, expected_activation_id: k.aid,
        patch: { retry_count: i % 5, last_reason: 'bench_cas', blocked_reason: null } }));
      k.version = r.role.version;
      return r;
    };
  } },
  { name: 'recoverRoleRegistry', area: 'roles', seeds: ['agents', 'roles'], op: (s) => () => s.recoverRoleRegistry(Date.now()) },

  // the raw better-sqlite3-style facade, statements prepared once
  { name: 'db.get', facade: true, area: 'facade', seeds: ['meta'], op: (s) => {
    const stmt = s.db.prepare('SELECT value FROM _meta WHERE key = ?');
    return (i) => stmt.get(`bench.key.${i % 100}`);
  } },
  // one value alone (pluck) and a row as an array (raw): no object built on either side,
  // so the call's own cost shows
  { name: 'db.get pluck', facade: true, area: 'facade', seeds: ['meta'], op: (s) => {
    const stmt = s.db.prepare('SELECT value FROM _meta WHERE key = ?').pluck();
    return (i) => stmt.get(`bench.key.${i % 100}`);
  } },
  { name: 'db.get raw', facade: true, area: 'facade', seeds: ['agents'], op: (s) => {
    const stmt = s.db.prepare('SELECT agent_id, pid FROM agents WHERE agent_id = ?').raw();
    return (i) => stmt.get(AGENTS[i % 100]);
  } },
  { name: 'db.get6', facade: true, area: 'facade', seeds: ['agents'], op: (s) => {
    const stmt = s.db.prepare('SELECT agent_id, cli, pid, status, last_seen_ms, lease_expires_ms FROM agents WHERE agent_id = ?');
    return (i) => stmt.get(AGENTS[i % 100]);
  } },
  // reads with safe integers (stmt.safeIntegers(): INTEGER values as BigInt), at most
  // better-sqlite3's time
  { name: 'db.get bigint', facade: true, target: 1.0, area: 'facade', seeds: ['agents'], op: (s) => {
    const stmt = s.db.prepare('SELECT pid, last_seen_ms, lease_expires_ms FROM agents WHERE agent_id = ?').safeIntegers();
    return (i) => stmt.get(AGENTS[i % 100]);
  } },
  { name: 'db.all bigint', facade: true, target: 1.0, area: 'facade', seeds: ['agents'], op: (s) => {
    const stmt = s.db.prepare('SELECT rowid, pid, last_seen_ms FROM agents ORDER BY rowid LIMIT 20').safeIntegers();
    return () => stmt.all();
  } },
  { name: 'db.run', facade: true, area: 'facade', seeds: [], op: (s) => {
    const stmt = s.db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)');
    return (i) => stmt.run(`bench.w.${i % 100}`, `{"v":${i}}`);
  } },
];
