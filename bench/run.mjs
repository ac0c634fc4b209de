// Benchmark: the native store (../index.mjs) against bench/baseline.mjs, a better-sqlite3
// store doing the same statements. Each method runs on its own pair of fresh, file-backed
// WAL databases seeded with identical rows. Addon and baseline runs alternate; the ratio
// reported is the median of the per-repetition ratios addon/baseline (lower is better).
//
//   node bench/run.mjs [--reps N] [--only a,b] [--json out.json] [--ms N] [--wal-natural] [--aa] [--keep]

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { createBaselineStore, encodeRoleKey, uuidv7 } from './baseline.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(import.meta.url);

// ---------------------------------------------------------------- options

function parseArgs(argv) {
  const opts = { reps: 7, only: null, json: null, ms: 300, wal: 'quiet', aa: false, keep: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, null];
    const value = () => {
      if (inline != null) return inline;
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--reps': opts.reps = Number(value()); break;
      case '--only': opts.only = value().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--json': opts.json = value(); break;
      case '--ms': opts.ms = Number(value()); break;
      case '--keep': opts.keep = true; break;
      case '--wal-natural': opts.wal = 'natural'; break;
      case '--aa': opts.aa = true; break;
      case '-h': case '--help': opts.help = true; break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (!Number.isInteger(opts.reps) || opts.reps < 5) throw new Error('--reps must be an integer >= 5');
  if (!(opts.ms > 0)) throw new Error('--ms must be a positive number');
  return opts;
}

// ---------------------------------------------------------------- helpers

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const pad = (n, w) => String(n).padStart(w, '0');
const NOW = Date.now();
const FAR = NOW + 1e10;

/** Shape of a result (keys in order, value kinds), to check both sides did the same work. */
function shape(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.length}:${v.length ? shape(v[0]) : ''}]`;
  if (typeof v === 'object') return `{${Object.keys(v).map((k) => `${k}:${shape(v[k])}`).join(',')}}`;
  return typeof v;
}

function buildKind() {
  try {
    const node = readdirSync(root).find((f) => /^triflux-native-store\..*\.node$/.test(f));
    if (!node) return 'missing';
    const size = statSync(join(root, node)).size;
    const libs = (profile) => {
      const out = [];
      for (const dir of [join(root, 'target', profile), ...readdirSync(join(root, 'target')).map((t) => join(root, 'target', t, profile))]) {
        try {
          for (const f of readdirSync(dir)) {
            if (/^(lib)?triflux_native_store\.(so|dylib|dll)$/.test(f)) out.push(statSync(join(dir, f)).size);
          }
        } catch {}
      }
      return out;
    };
    if (libs('release').includes(size)) return 'release';
    if (libs('debug').includes(size)) return 'debug';
    return 'unknown';
  } catch {
    return 'unknown';
  }
}

/** SQLite version behind a store, through its `db` facade when it has one. */
function sqliteVersion(open) {
  let store = null;
  try {
    store = open();
    return store.db?.prepare('SELECT sqlite_version() AS v').get().v ?? 'unknown (no db facade)';
  } catch (e) {
    return `unknown (${String(e?.message ?? e).split('\n')[0]})`;
  } finally {
    try { store?.close(); } catch {}
  }
}

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

const SEEDS = {
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

const SLICES = 4; // minimum slices per repetition
const PROBE = 20; // calls used to measure WAL frames per call
const QUIET_FRAMES = 500; // WAL frames a timed slice may append (autocheckpoint is at 1000)
const STORE_TARGET = 0.8;
const FACADE_TARGET = 1.2;

function mustOk(r) {
  if (!r || r.ok !== true) throw new Error(`expected ok:true, got ${JSON.stringify(r)?.slice(0, 200)}`);
  return r;
}

const CASES = [
  // agents and messages
  { name: 'registerAgent', area: 'agents', seeds: ['agents'], op: (s) => (i) => s.registerAgent({
    agent_id: AGENTS[i % 100], cli: 'codex', pid: 4242, capabilities: ['code', 'review'], topics: ['build', 'deploy'],
    heartbeat_ttl_ms: 30000, metadata: { host: 'bench-host', slot: i % 100 } }) },
  { name: 'refreshLease', area: 'agents', seeds: ['agents'], op: (s) => (i) => s.refreshLease(AGENTS[i % 100], 30000) },
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
  { name: 'db.run', facade: true, area: 'facade', seeds: [], op: (s) => {
    const stmt = s.db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)');
    return (i) => stmt.run(`bench.w.${i % 100}`, `{"v":${i}}`);
  } },
];

// ---------------------------------------------------------------- timing

function timeRun(fn, start, n) {
  const t0 = process.hrtime.bigint();
  for (let i = start; i < start + n; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1e3 / n; // µs per op
}

/** Runs a WAL checkpoint through a store's own `db` handle; returns the frames the WAL held. */
function checkpoint(store, mode = 'PASSIVE') {
  const r = store.db.prepare(`PRAGMA wal_checkpoint(${mode})`).get();
  if (!r || typeof r.log !== 'number') throw new Error('wal_checkpoint returned no frame count');
  return r.log;
}

/** WAL frames appended per call of a case, on a scratch baseline store. */
function walFramesPerCall(c, path) {
  prepareFile(path, c.seeds);
  const s = createBaselineStore(path);
  try {
    const op = c.op(s);
    for (let i = 0; i < PROBE; i++) op(i);
    checkpoint(s, 'TRUNCATE');
    for (let i = PROBE; i < 2 * PROBE; i++) op(i);
    return checkpoint(s) / PROBE; // TRUNCATE reports 0 frames, PASSIVE the count
  } finally {
    s.close();
  }
}

/**
 * Creates and seeds a database file BEFORE the store under test opens it. Seeding goes
 * through the baseline (better-sqlite3), which writes the same schema.sql; it must never
 * touch the addon's file while the addon has it open: the addon has its own SQLite copy,
 * and POSIX locks are per process, so a second library closing its descriptor would drop
 * the addon's locks.
 */
function prepareFile(path, seeds) {
  const s = createBaselineStore(path);
  try {
    s.db.transaction(() => {
      for (const name of seeds) SEEDS[name](s.db);
    })();
  } finally {
    s.close();
  }
}

function runCase(c, createStore, dir, opts) {
  const target = c.facade ? FACADE_TARGET : STORE_TARGET;
  const row = { method: c.name, area: c.area, target, addon_us: null, baseline_us: null, ratio: null, status: '', n: 0, shape: null };
  const addonPath = join(dir, `${c.name}.addon.db`);
  const basePath = join(dir, `${c.name}.baseline.db`);
  let addon = null;
  let base = null;
  try {
    prepareFile(basePath, c.seeds);
    prepareFile(addonPath, c.seeds);
    addon = createStore(addonPath);
    base = createBaselineStore(basePath);
    const implemented = c.facade
      ? addon.db != null && typeof addon.db.prepare === 'function'
      : typeof addon[c.method ?? c.name] === 'function';
    // A method the addon lacks is still timed on the baseline: that checks the baseline
    // and gives the reference number; the row says "n/a (not implemented)".
    const baseOp = c.op(base);
    let addonOp = null;
    if (implemented) {
      try {
        addonOp = c.op(addon);
      } catch (e) {
        row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
        addonOp = null;
      }
    }

    // WAL frames one call appends, measured on a throwaway baseline file, so that no
    // checkpoint touches the measured files and both of their WALs stay in step.
    const framesPerCall = walFramesPerCall(c, join(dir, `${c.name}.probe.db`));
    row.wal_frames_per_call = framesPerCall;

    // Warm-up: the baseline for ~ms, then the addon for the same number of calls, so that
    // both sides have the same state and their last results are comparable.
    let w = 0;
    let baseLast;
    const wt0 = process.hrtime.bigint();
    while (w < 50 || (w < 100000 && Number(process.hrtime.bigint() - wt0) / 1e6 < opts.ms)) baseLast = baseOp(w++);
    const baseWarm = Number(process.hrtime.bigint() - wt0) / 1e3 / w;

    let addonWarm = 0;
    if (addonOp) {
      let addonLast;
      const at0 = process.hrtime.bigint();
      try {
        for (let i = 0; i < w; i++) addonLast = addonOp(i);
        addonWarm = Number(process.hrtime.bigint() - at0) / 1e3 / w;
        row.shape = shape(addonLast) === shape(baseLast) ? 'same' : 'DIFF';
        if (row.shape === 'DIFF') row.shape_detail = { addon: shape(addonLast), baseline: shape(baseLast) };
      } catch (e) {
        row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
        addonOp = null;
      }
    }

    // Calls per repetition and per slice. One repetition is a series of equal slices,
    // alternating sides (A B A B … or B A B A …, flipped every repetition), so a load change
    // on this shared machine hits both sides, and both sides make the same calls in the same
    // slices. For a writing method in "quiet" WAL mode (the default, used when the addon has
    // its `db` facade to run the PRAGMA on its own connection), slices stay under
    // ~QUIET_FRAMES WAL frames and both files are checkpointed, untimed, before every slice:
    // SQLite's automatic checkpoint (an fsync every ~1000 frames, the same work on both
    // sides) then never lands inside a timed slice, where it only adds noise. Otherwise
    // ("natural") the automatic checkpoints stay in the timings.
    const n = Math.max(20, Math.min(200000, Math.round((opts.ms * 1000) / Math.max(baseWarm, addonWarm))));
    let quiet = opts.wal === 'quiet' && framesPerCall > 0 && addonOp != null;
    if (quiet) {
      try {
        checkpoint(addon); // needs the addon's db facade
      } catch {
        quiet = false;
      }
    }
    if (framesPerCall > 0 && addonOp) row.wal = quiet ? 'quiet' : 'natural';
    // Slices of a writing method stay under ~QUIET_FRAMES WAL frames in both modes: in
    // "natural" mode a slice pair then holds at most one automatic checkpoint, and the
    // median over slice pairs (below) sets that pair aside.
    let per = Math.ceil(n / SLICES);
    if (framesPerCall > 0) per = Math.max(1, Math.min(per, Math.floor(QUIET_FRAMES / framesPerCall)));
    const slices = Math.max(SLICES, Math.ceil(n / per));
    row.n = slices * per;
    row.slice = per;
    const a = [];
    const b = [];
    const ratios = [];
    let ai = w;
    let bi = w;
    for (let r = 0; r < opts.reps; r++) {
      const addonFirst = r % 2 === 0;
      let ta = 0;
      let tb = 0;
      const pairs = [];
      gc();
      for (let k = 0; k < slices; k++) {
        if (quiet) {
          checkpoint(base);
          checkpoint(addon);
        }
        let sa = 0;
        let sb = 0;
        for (const side of addonFirst ? ['a', 'b'] : ['b', 'a']) {
          if (side === 'b') {
            sb = timeRun(baseOp, bi, per);
            bi += per;
          } else if (addonOp) {
            sa = timeRun(addonOp, ai, per);
            ai += per;
          }
        }
        ta += sa;
        tb += sb;
        if (addonOp) pairs.push(sa / sb);
      }
      b.push(tb / slices);
      if (addonOp) {
        a.push(ta / slices);
        ratios.push(median(pairs)); // this repetition's ratio: the median over its slice pairs
      }
    }
    row.baseline_us = median(b);
    if (!addonOp) {
      if (!row.status) row.status = 'n/a (not implemented)';
      row.reps = { baseline_us: b };
      return row;
    }
    row.addon_us = median(a);
    row.ratio = median(ratios);
    row.reps = { addon_us: a, baseline_us: b, ratios };
    row.status = row.ratio <= target ? 'pass' : 'miss';
    return row;
  } catch (e) {
    row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
    return row;
  } finally {
    for (const h of [addon, base]) {
      try { h?.close(); } catch {}
    }
  }
}

// ---------------------------------------------------------------- table

function fmt(x) {
  if (x == null) return '-';
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

function printTable(rows) {
  const head = ['method', 'area', 'addon µs/op', 'baseline µs/op', 'ratio', 'target', 'result', 'shape', 'wal'];
  const body = rows.map((r) => [
    r.method, r.area, fmt(r.addon_us), fmt(r.baseline_us), r.ratio == null ? '-' : r.ratio.toFixed(2),
    `≤ ${r.target}`, r.status, r.shape ?? '-', r.wal ?? '-',
  ]);
  const widths = head.map((h, k) => Math.max(h.length, ...body.map((b) => b[k].length)));
  const line = (cells) => cells.map((c, k) => (k >= 2 && k <= 5 ? c.padStart(widths[k]) : c.padEnd(widths[k]))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

// ---------------------------------------------------------------- main

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench: ${e.message}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log('usage: node bench/run.mjs [--reps N>=5] [--only name,name] [--json file] [--ms per-run-ms] [--wal-natural] [--aa] [--keep]');
    console.log(`methods: ${CASES.map((c) => c.name).join(', ')}`);
    return;
  }
  let cases = CASES;
  if (opts.only) {
    const unknown = opts.only.filter((n) => !CASES.some((c) => c.name === n));
    if (unknown.length) {
      console.error(`bench: unknown method(s): ${unknown.join(', ')}\nknown: ${CASES.map((c) => c.name).join(', ')}`);
      process.exit(2);
    }
    cases = CASES.filter((c) => opts.only.includes(c.name));
  }

  let createStore;
  if (opts.aa) {
    // A/A run: the baseline against itself; the spread of its ratios around 1.00 is the
    // noise floor of this machine at this moment.
    createStore = createBaselineStore;
  } else {
    try {
      ({ createStore } = await import('../index.mjs'));
    } catch (e) {
      console.error(`bench: cannot load the addon (build it first with \`npm run build\`): ${e.message}`);
      process.exit(1);
    }
  }
  const build = opts.aa ? 'none (A/A run: baseline vs baseline)' : buildKind();
  const betterVersion = require('better-sqlite3/package.json').version;
  console.log(`addon build: ${build}; better-sqlite3 ${betterVersion}; node ${process.version}; ` +
    `reps ${opts.reps}; ~${opts.ms} ms per timed run; WAL ${opts.wal}`);
  if (build === 'debug') console.log('WARNING: the addon is a debug build; run `npm run build` (release) for meaningful numbers.');

  const dir = mkdtempSync(join(tmpdir(), 'tfx-bench-'));
  console.log(`sqlite: addon ${sqliteVersion(() => createStore(join(dir, 'probe.addon.db')))}, ` +
    `baseline ${sqliteVersion(() => createBaselineStore(join(dir, 'probe.baseline.db')))}`);
  const rows = [];
  const t0 = Date.now();
  try {
    for (const c of cases) {
      const row = runCase(c, createStore, dir, opts);
      rows.push(row);
      const info = row.ratio == null ? row.status : `ratio ${row.ratio.toFixed(2)} (${row.status})`;
      process.stderr.write(`  ${c.name}: ${info}\n`);
    }
  } finally {
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`databases kept in ${dir}`);
  }
  console.log('');
  printTable(rows);
  const measured = rows.filter((r) => r.ratio != null);
  const missed = measured.filter((r) => r.status === 'miss');
  console.log(`\n${measured.length} measured, ${measured.length - missed.length} pass, ${missed.length} miss, ` +
    `${rows.length - measured.length} not measured; ${((Date.now() - t0) / 1000).toFixed(0)} s. ` +
    'ratio = median over repetitions of addon/baseline time per op (lower is better).');
  for (const r of rows.filter((x) => x.shape === 'DIFF')) {
    console.log(`shape differs for ${r.method}:\n  addon:    ${r.shape_detail.addon}\n  baseline: ${r.shape_detail.baseline}`);
  }
  if (opts.json) {
    writeFileSync(opts.json, `${JSON.stringify({
      date: new Date().toISOString(), node: process.version, platform: `${process.platform}-${process.arch}`,
      better_sqlite3: betterVersion, addon_build: build, reps: opts.reps, ms_per_run: opts.ms, wal: opts.wal, rows,
    }, null, 2)}\n`);
    console.log(`wrote ${opts.json}`);
  }
}

await main();
