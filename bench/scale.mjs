#!/usr/bin/env node
// Per-tick reads against a growing log: each method at 1k, 10k, 100k and 1M messages, on this
// package and on better-sqlite3 running the original store's statements (copied from the
// v6 spec, the same way bench/baseline.mjs does), time per call and growth. See bench/README.md.
//
//   node bench/scale.mjs                         # sizes 1k,10k,100k,1M, case "realistic"
//   node bench/scale.mjs --sizes 1k,100k --case bursts --only getHubStats,sweepExpired
//   node bench/scale.mjs --sizes 1M --grow open   # the first open of a file the original wrote
//   node bench/scale.mjs --case queued            # 40% of the log stays queued, N/10 assign jobs
//   node bench/scale.mjs --soak 60                # a busy hub's calls for 60 s on each side
//   node bench/scale.mjs --schema 8               # the /v8 store against the v8 original's statements
//
// Files are generated once per (case, size) into --cache (default: <tmpdir>/triflux-scale)
// by better-sqlite3 with the original schema, in one transaction. The addon's log grows
// the way a running hub's does (--grow store, the default): the store opens an empty file
// (the original schema), the bulk is copied in with raw SQL through store.db, and the
// newest GROW_ROWS messages are written through store.auditLog, whose insert that reaches
// the large-log threshold converts the file (that call's time is printed). With
// --grow open the addon instead opens a copy of the original's file, converted at its
// first open (that open's time is printed). Every run refreshes the recent part of the log
// on both files with the same `now`, then writes the GROW_ROWS messages through auditLog
// on both sides (to a recipient no timed read looks at), so the outputs can be compared.
// Each side runs in its own child process: never open one file with both SQLite libraries
// in one process.

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { originalMethods } from './original-tick.mjs';
import { agentId, generate, refreshRecent, roleWires } from './scale-data.mjs';
import { firstLargeWindow, soak, soakReport } from './scale-soak.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Messages each side writes through auditLog before the timed reads. */
const GROW_ROWS = 1000;
/** The entry of each schema version (--schema). */
const ENTRIES = { 6: '../index.mjs', 7: '../v7.mjs', 8: '../v8.mjs' };
const BULK_TABLES = ['agents', 'messages', 'dead_letters', 'human_requests', 'assign_jobs', 'role_registry', 'bench_state'];

const METHODS = [
  'getAuditMessagesForAgent+topics',
  'getAuditMessagesForAgent',
  'pollForAgent',
  'getDeliveryStats',
  'sweepExpired',
  'getQueueDepths',
  'getHubStats',
  'getAuditStats',
  'expireHumanRequests',
  'sweepStaleAgents',
  'listRolesWithExpiredHolder',
  'listPendingRoleMessages',
];

function parseArgs(argv) {
  const o = { schema: 6, window: 5, sizes: '1k,10k,100k,1M', case: 'realistic', only: null, ms: 150, reps: 5, cache: join(tmpdir(), 'triflux-scale'), side: 'both', grow: 'store' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--sizes') o.sizes = v();
    else if (a === '--schema') o.schema = Number(v());
    else if (a === '--case') o.case = v();
    else if (a === '--only') o.only = v().split(',');
    else if (a === '--ms') o.ms = Number(v());
    else if (a === '--reps') o.reps = Number(v());
    else if (a === '--cache') o.cache = v();
    else if (a === '--side') o.side = v();
    else if (a === '--grow') o.grow = v();
    else if (a === '--base') o.base = v();
    else if (a === '--fresh') o.fresh = true;
    else if (a === '--json') o.json = v();
    else if (a === '--child') o.child = v();
    else if (a === '--file') o.file = v();
    else if (a === '--now') o.now = Number(v());
    else if (a === '--gen') o.gen = v();
    else if (a === '--n') o.n = Number(v());
    else if (a === '--soak') o.soak = Number(v());
    else if (a === '--window') o.window = Number(v());
    else if (a === '--help') o.help = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const sizeOf = (s) => {
  const m = /^(\d+)([kKmM]?)$/u.exec(s.trim());
  if (!m) throw new Error(`bad size ${s}`);
  return Number(m[1]) * (m[2] === '' ? 1 : /k/iu.test(m[2]) ? 1000 : 1_000_000);
};

// ------------------------------------------------------------ child: time one side

function calls(store, now) {
  const wire = roleWires()[0];
  return {
    'getAuditMessagesForAgent+topics': () => store.getAuditMessagesForAgent(agentId(7), { max_messages: 20 }),
    getAuditMessagesForAgent: () => store.getAuditMessagesForAgent(agentId(42), { max_messages: 20 }),
    pollForAgent: () => store.pollForAgent(agentId(42), { max_messages: 20 }),
    getDeliveryStats: () => store.getDeliveryStats(),
    sweepExpired: () => store.sweepExpired(),
    getQueueDepths: () => store.getQueueDepths(),
    getHubStats: () => store.getHubStats(),
    getAuditStats: () => store.getAuditStats(),
    expireHumanRequests: () => store.expireHumanRequests(),
    sweepStaleAgents: () => store.sweepStaleAgents(),
    listRolesWithExpiredHolder: () => store.listRolesWithExpiredHolder(now),
    listPendingRoleMessages: () => store.listPendingRoleMessages(wire, now),
  };
}

function fnv(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}

/**
 * The store's own writes of a running hub: auditLog, timed; returns the slowest call. In
 * the "queued" case 4 in 10 of them stay queued (priorities 1-9), as the bulk does.
 */
function growThroughStore(store, queued) {
  let slowest = 0;
  for (let i = 0; i < GROW_ROWS; i++) {
    const stays = queued && i % 10 < 4;
    const t0 = performance.now();
    store.auditLog({ type: 'event', from: agentId(i % 10), to: 'bench-grow', topic: 'grow', status: stays ? 'queued' : 'acked',
      priority: stays ? 1 + (i % 9) : 5, ttl_ms: stays ? 30 * 86_400_000 : 300_000, payload: { i } });
    slowest = Math.max(slowest, performance.now() - t0);
  }
  return slowest;
}

/** Raw SQL through store.db: the bulk of the original's file, into the store's own file. */
function copyBulk(db, from) {
  db.exec(`ATTACH DATABASE '${from.replaceAll("'", "''")}' AS bulk`);
  db.transaction(() => {
    db.exec('CREATE TABLE bench_state (key TEXT PRIMARY KEY, value INTEGER)');
    for (const table of BULK_TABLES) {
      // By name: a later schema's table has columns the generated file lacks (their defaults).
      const columns = db.pragma(`bulk.table_info(${table})`).map((c) => `"${c.name}"`).join(', ');
      db.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM bulk.${table}`);
    }
  })();
  db.exec('DETACH DATABASE bulk');
}

/** What the timed log holds (untimed, after the reads): its size and queued share. */
function composition(db) {
  const one = (sql) => db.prepare(sql).pluck().get();
  return {
    messages: one('SELECT COUNT(*) FROM messages'),
    queued: one("SELECT COUNT(*) FROM messages WHERE status = 'queued'"),
    jobs: one('SELECT COUNT(*) FROM assign_jobs'),
    activeJobs: one("SELECT COUNT(*) FROM assign_jobs WHERE status IN ('queued', 'running')"),
  };
}

/** --soak: one side's busy hub from an empty file. */
async function soakChild(o) {
  ['', '-wal', '-shm'].forEach((s) => rmSync(o.file + s, { force: true }));
  let store;
  let stats;
  let setStatus;
  if (o.child === 'baseline') {
    const { createBaselineStore } = await import('./baseline.mjs');
    store = createBaselineStore(o.file, { schema: o.schema });
    stats = originalMethods(store.db, o.schema);
    const update = store.db.prepare('UPDATE messages SET status=? WHERE id=?');
    setStatus = (id, status) => update.run(status, id);
  } else {
    const { createStore } = await import(ENTRIES[o.schema]);
    store = createStore(o.file);
    stats = store;
    setStatus = (id, status) => store.updateMessageStatus(id, status);
  }
  for (let i = 0; i < 100; i++) store.registerAgent({ agent_id: agentId(i), cli: 'codex', heartbeat_ttl_ms: 3_600_000 });
  const windows = soak({ store, stats, setStatus, seconds: o.soak, windowSeconds: o.window });
  store.close();
  process.stdout.write(JSON.stringify(windows));
}

async function child(o) {
  if (o.soak) return soakChild(o);
  let store;
  let openMs;
  let close;
  let slowestWrite;
  let logDb;
  if (o.child === 'baseline') {
    // The benchmark's baseline store opens the file as the original did (the same
    // PRAGMAs) and brings the original's auditLog; the timed reads are the original's
    // per-tick statements on its connection.
    const { createBaselineStore } = await import('./baseline.mjs');
    const t0 = performance.now();
    const baseline = createBaselineStore(o.file, { schema: o.schema });
    openMs = performance.now() - t0;
    refreshRecent(baseline.db, o.now);
    store = originalMethods(baseline.db, o.schema);
    slowestWrite = growThroughStore(baseline, o.case === 'queued');
    logDb = baseline.db;
    close = () => baseline.close();
  } else {
    const { createStore } = await import(ENTRIES[o.schema]);
    if (o.grow === 'store') ['', '-wal', '-shm'].forEach((s) => rmSync(o.file + s, { force: true }));
    const t0 = performance.now();
    store = createStore(o.file);
    openMs = performance.now() - t0;
    if (o.grow === 'store') copyBulk(store.db, o.base);
    refreshRecent(store.db, o.now);
    slowestWrite = growThroughStore(store, o.case === 'queued');
    logDb = store.db;
    close = () => store.close();
  }
  const fns = calls(store, Date.now() + 60_000);
  const out = { openMs, slowestWrite, methods: {} };
  for (const name of METHODS) {
    if (o.only && !o.only.includes(name)) continue;
    const fn = fns[name];
    const result = JSON.stringify(fn());
    fn();
    fn();
    const perCall = [];
    for (let r = 0; r < o.reps; r++) {
      let n = 0;
      const t0 = performance.now();
      let t = t0;
      while (n < 3 || t - t0 < o.ms) {
        fn();
        n += 1;
        t = performance.now();
      }
      perCall.push(((t - t0) * 1000) / n);
    }
    perCall.sort((a, b) => a - b);
    out.methods[name] = { us: perCall[perCall.length >> 1], hash: fnv(result), sample: result.slice(0, 160) };
  }
  out.log = composition(logDb);
  close();
  process.stdout.write(JSON.stringify(out));
}

// ------------------------------------------------------------ orchestrator

function runChild(args) {
  const text = execFileSync(process.execPath, [join(here, 'scale.mjs'), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return text ? JSON.parse(text) : null;
}

const fmt = (us) => (us == null ? '-' : us >= 1000 ? `${(us / 1000).toFixed(us >= 100_000 ? 0 : 1)} ms` : `${us.toFixed(us >= 100 ? 0 : 1)} µs`);
const sizeName = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')).join('\n');
}

/**
 * --soak: each side's busy hub in its own child process, one after the other. Growth is
 * taken on both sides from the same window: the first in which this package's log had
 * passed the large-log threshold (10,000 messages).
 */
function mainSoak(o) {
  mkdirSync(o.cache, { recursive: true });
  const args = (side) => ['--child', side, '--schema', String(o.schema), '--soak', String(o.soak), '--window', String(o.window), '--file', join(o.cache, `soak-${side}.db`)];
  const runs = [['addon', 'this package'], ['baseline', 'original statements (better-sqlite3)']]
    .filter(([side]) => o.side === 'both' || o.side === side)
    .map(([side, label]) => ({ side, label, windows: runChild(args(side)) }));
  const addon = runs.find((r) => r.side === 'addon');
  const from = addon ? firstLargeWindow(addon.windows, 10_000) : 0;
  for (const { label, windows } of runs) console.log(`${soakReport(`soak, ${label}, ${o.soak} s:`, windows, fmt, from)}\n`);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    console.log(`node bench/scale.mjs [--sizes 1k,10k,100k,1M] [--case realistic|bursts|queued] [--grow store|open] [--only a,b]
  [--side both|addon|baseline] [--ms 150] [--reps 5] [--cache dir] [--fresh] [--json file]
node bench/scale.mjs --soak SECONDS [--window 5] [--side both|addon|baseline] [--cache dir]\nmethods: ${METHODS.join(', ')}`);
    return;
  }
  if (o.gen) {
    generate(o.gen, o.n, { bursts: o.case === 'bursts', queued: o.case === 'queued', schemaSql: readFileSync(join(here, '..', 'src', 'store', 'schema.sql'), 'utf8') });
    return;
  }
  if (o.child) return child(o);
  if (o.soak) return mainSoak(o);

  const sizes = o.sizes.split(',').map(sizeOf);
  mkdirSync(o.cache, { recursive: true });
  const results = [];
  for (const n of sizes) {
    // A later schema's baseline migrates its file: each schema has its own copies.
    const schema = o.schema === 6 ? '' : `-v${o.schema}`;
    const base = join(o.cache, `base-${o.case}-${n}${schema}.db`);
    const addon = join(o.cache, `addon-${o.grow === 'store' ? 'grown' : 'opened'}-${o.case}-${n}${schema}.db`);
    const drop = (p) => ['', '-wal', '-shm'].forEach((s) => rmSync(p + s, { force: true }));
    if (o.fresh) [base, addon].forEach(drop);
    if (!existsSync(base)) {
      drop(addon);
      const t0 = performance.now();
      runChild(['--gen', base, '--n', String(n), '--case', o.case]);
      console.error(`generated ${sizeName(n)} (${o.case}) in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${(statSync(base).size / 2 ** 20).toFixed(0)} MiB`);
    }
    let firstOpen = false;
    if (o.grow === 'open' && !existsSync(addon)) {
      copyFileSync(base, addon);
      firstOpen = true;
    }
    const now = Date.now();
    const common = ['--schema', String(o.schema), '--case', o.case, '--now', String(now), '--ms', String(o.ms), '--reps', String(o.reps), '--grow', o.grow, '--base', base,
      ...(o.only ? ['--only', o.only.join(',')] : [])];
    const b = o.side === 'addon' ? null : runChild(['--child', 'baseline', '--file', base, ...common]);
    const a = o.side === 'baseline' ? null : runChild(['--child', 'addon', '--file', addon, ...common]);
    results.push({ n, base: b, addon: a, firstOpen });
    if (a) {
      const how = o.grow === 'store' ? 'log grown through the store' : firstOpen ? 'first open: adds the indexes' : 'reopen';
      console.error(`${sizeName(n)}: addon open ${a.openMs.toFixed(1)} ms (${how}); slowest of ${GROW_ROWS} auditLog: ` +
        `addon ${a.slowestWrite.toFixed(1)} ms, baseline ${b ? b.slowestWrite.toFixed(1) : '-'} ms`);
    }
    const log = (a ?? b).log;
    console.error(`${sizeName(n)}: ${log.messages} messages, ${log.queued} queued (${((100 * log.queued) / log.messages).toFixed(1)}%), ` +
      `${log.jobs} assign jobs, ${log.activeJobs} queued or running`);
  }

  const rows = [['method', 'messages', 'addon', 'baseline', 'speedup', 'output']];
  for (const name of METHODS) {
    if (o.only && !o.only.includes(name)) continue;
    for (const r of results) {
      const a = r.addon?.methods[name];
      const b = r.base?.methods[name];
      const speed = a && b ? `×${(b.us / a.us).toFixed(1)}` : '-';
      const same = a && b ? (a.hash === b.hash ? 'same' : 'DIFF') : '-';
      rows.push([name, sizeName(r.n), fmt(a?.us), fmt(b?.us), speed, same]);
    }
  }
  console.log(table(rows));
  if (results.length > 1) {
    const first = results[0];
    const last = results[results.length - 1];
    const g = [['method', `growth ${sizeName(first.n)}→${sizeName(last.n)}: addon`, 'baseline']];
    for (const name of METHODS) {
      if (o.only && !o.only.includes(name)) continue;
      const ratio = (side) => {
        const x = first[side]?.methods[name]?.us;
        const y = last[side]?.methods[name]?.us;
        return x && y ? `×${(y / x).toFixed(2)}` : '-';
      };
      g.push([name, ratio('addon'), ratio('base')]);
    }
    console.log(`\n${table(g)}`);
  }
  for (const r of results) {
    for (const name of METHODS) {
      const a = r.addon?.methods[name];
      const b = r.base?.methods[name];
      if (a && b && a.hash !== b.hash) console.log(`\nDIFF ${name} @${sizeName(r.n)}\n  addon:    ${a.sample}\n  baseline: ${b.sample}`);
    }
  }
  if (o.json) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(o.json, JSON.stringify(results, null, 2));
  }
}

await main();
