// Benchmark: what one statement call costs beyond SQLite's own work, in every row mode and
// argument form: this package's Database against better-sqlite3 built for the running
// Node, and node:sqlite where the Node has it and the mode exists there. Each side opens an
// in-memory database with the same 100-row table, so that no file system and little
// SQLite work hides the call itself. Each repetition times every case on every side
// (rotating which goes first); a case's ratio is the median of the per-repetition ratios
// this package / better-sqlite3 (lower is better; ≤ 1.00 means at least as fast).
//
//   node bench/calls.mjs [--reps N] [--calls N] [--only raw,pluck] [--json out.json]
//   node bench/all-nodes.mjs --bench calls --nodes 20,22,24,26 -- --reps 9

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';

import { loadReference } from '../tools/reference.mjs';
import { intervalText, median, medianInterval } from './stats.mjs';

const require = createRequire(import.meta.url);
const { Database } = require('../lib/database/database.cjs');
const BetterSqlite3 = loadReference();
const NodeSqlite = (() => {
  try {
    return require('node:sqlite').DatabaseSync;
  } catch {
    return null;
  }
})();

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const reps = Number(arg('reps', 7));
const calls = Number(arg('calls', 100_000));
const only = arg('only', null)?.split(',') ?? null;
const json = arg('json', null);
if (!Number.isInteger(reps) || reps < 1 || !Number.isInteger(calls) || calls < 1) {
  console.error('usage: node bench/calls.mjs [--reps N] [--calls N] [--only a,b] [--json out.json]');
  process.exit(2);
}

const ROWS = 100;

/** The same table on any side (node:sqlite's `exec` and `prepare` are spelled alike). */
function open(Db) {
  const db = new Db(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL, share REAL NOT NULL)');
  const insert = db.prepare('INSERT INTO t (id, name, n, share) VALUES (?, ?, ?, ?)');
  for (let id = 1; id <= ROWS; id++) insert.run(id, `item-${id}`, id * 7, id / 3);
  return db;
}

const ONE = 'SELECT n FROM t WHERE id = ?';
const THREE = 'SELECT name, n, share FROM t WHERE id = ?';
const id = (i) => (i % ROWS) + 1;

/**
 * Each case: its SQL, the call on better-sqlite3's API (this package's too), and on
 * node:sqlite's where that has the mode (null where it has not). `setup` adjusts a
 * prepared statement (a row mode).
 */
const CASES = [
  { name: 'get, object of one column', sql: ONE, call: (s, i) => s.get(id(i)), nodeSqlite: (s, i) => s.get(id(i)) },
  { name: 'get, object of three columns', sql: THREE, call: (s, i) => s.get(id(i)), nodeSqlite: (s, i) => s.get(id(i)) },
  {
    name: 'get, raw (array of three)',
    sql: THREE,
    setup: (s) => s.raw(),
    call: (s, i) => s.get(id(i)),
    nodeSqliteSetup: (s) => (typeof s.setReturnArrays === 'function' ? (s.setReturnArrays(true), s) : null),
    nodeSqlite: (s, i) => s.get(id(i)),
  },
  { name: 'get, pluck (one INTEGER)', sql: ONE, setup: (s) => s.pluck(), call: (s, i) => s.get(id(i)), nodeSqlite: null },
  { name: 'get, expand (three columns)', sql: THREE, setup: (s) => s.expand(), call: (s, i) => s.get(id(i)), nodeSqlite: null },
  { name: 'get, no parameter (SELECT 1, plucked)', sql: 'SELECT 1', setup: (s) => s.pluck(), call: (s) => s.get(), nodeSqlite: null },
  {
    name: 'get, three positional parameters',
    sql: 'SELECT n FROM t WHERE id = ? AND n >= ? AND name <> ?',
    call: (s, i) => s.get(id(i), 0, 'none'),
    nodeSqlite: (s, i) => s.get(id(i), 0, 'none'),
  },
  {
    name: 'get, named parameters (an object)',
    sql: 'SELECT n FROM t WHERE id = @id AND n >= @least',
    call: (s, i) => s.get({ id: id(i), least: 0 }),
    nodeSqlite: (s, i) => s.get({ id: id(i), least: 0 }),
  },
  {
    name: 'get, one TEXT parameter',
    sql: 'SELECT n FROM t WHERE name = ?',
    call: (s, i) => s.get(`item-${id(i)}`),
    nodeSqlite: (s, i) => s.get(`item-${id(i)}`),
  },
  {
    name: 'run, update of one row',
    sql: 'UPDATE t SET n = n + 1 WHERE id = ?',
    call: (s, i) => s.run(id(i)).changes,
    nodeSqlite: (s, i) => s.run(id(i)).changes,
  },
  {
    name: 'all, five rows of three columns',
    sql: 'SELECT name, n, share FROM t WHERE id BETWEEN ? AND ? + 4',
    call: (s, i) => s.all(id(i), id(i)),
    nodeSqlite: (s, i) => s.all(id(i), id(i)),
  },
  {
    name: 'iterate, five rows of three columns',
    sql: 'SELECT name, n, share FROM t WHERE id BETWEEN ? AND ? + 4',
    call: (s, i) => {
      let last;
      for (const row of s.iterate(id(i), id(i))) last = row;
      return last;
    },
    nodeSqlite: (s, i) => {
      let last;
      for (const row of s.iterate(id(i), id(i))) last = row;
      return last;
    },
  },
].filter((c) => only === null || only.some((term) => c.name.includes(term)));

function time(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / calls;
}

/** A row as plain data, for comparing what the sides return (node:sqlite's rows have a null prototype). */
const plain = (value) => (value === null || typeof value !== 'object' ? value : JSON.parse(JSON.stringify(value)));

const sides = [
  { name: 'this package', db: open(Database) },
  { name: 'better-sqlite3', db: open(BetterSqlite3) },
  ...(NodeSqlite ? [{ name: 'node:sqlite', db: open(NodeSqlite), nodeSqlite: true }] : []),
];
const results = [];
for (const c of CASES) {
  const runs = [];
  for (const side of sides) {
    let stmt = side.db.prepare(c.sql);
    if (side.nodeSqlite) {
      if (c.nodeSqlite === null) continue;
      if (c.nodeSqliteSetup) stmt = c.nodeSqliteSetup(stmt);
      if (stmt === null) continue;
      runs.push({ side, fn: (i) => c.nodeSqlite(stmt, i) });
    } else {
      if (c.setup) c.setup(stmt);
      runs.push({ side, fn: (i) => c.call(stmt, i) });
    }
  }
  // The same answers first, one call a side (node:sqlite's rows compared as plain data).
  const answers = runs.map((run) => plain(run.fn(3)));
  runs.forEach((run, k) => {
    if (!isDeepStrictEqual(answers[k], answers[1])) throw new Error(`${c.name}: ${run.side.name} answers differently`);
  });
  for (const run of runs) time(run.fn);
  const ns = runs.map(() => []);
  const ratios = [];
  for (let r = 0; r < reps; r++) {
    const order = runs.map((_, k) => (k + r) % runs.length);
    const took = [];
    for (const k of order) took[k] = time(runs[k].fn);
    took.forEach((t, k) => ns[k].push(t));
    ratios.push(took[0] / took[1]);
  }
  results.push({
    name: c.name,
    ns: median(ns[0]),
    baselineNs: median(ns[1]),
    nodeSqliteNs: runs[2] ? median(ns[2]) : null,
    ratio: median(ratios),
    spread: [Math.min(...ratios), Math.max(...ratios)],
    interval: medianInterval(ratios),
  });
}
for (const side of sides) side.db.close();

console.log(`node ${process.versions.node}, in memory, ${calls} calls a case, ${reps} repetitions (median)`);
console.log('| case | this package (ns) | better-sqlite3 (ns) | node:sqlite (ns) | ratio | its 95% interval |');
console.log('|---|---:|---:|---:|---:|---|');
for (const r of results) {
  const nodeSqlite = r.nodeSqliteNs === null ? '-' : r.nodeSqliteNs.toFixed(0);
  console.log(`| ${r.name} | ${r.ns.toFixed(0)} | ${r.baselineNs.toFixed(0)} | ${nodeSqlite} | ${r.ratio.toFixed(2)} | ${intervalText(r.interval) || '-'} |`);
}
const geomean = Math.exp(results.reduce((sum, r) => sum + Math.log(r.ratio), 0) / results.length);
console.log(`geometric mean ${geomean.toFixed(2)} (worst ${Math.max(...results.map((r) => r.ratio)).toFixed(2)})`);
if (json) writeFileSync(json, JSON.stringify({ node: process.versions.node, calls, reps, results }, null, 2));
