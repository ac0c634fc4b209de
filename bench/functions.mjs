// Benchmark: user callbacks (db.function, db.aggregate, a window aggregate, db.table) on
// this package's Database against better-sqlite3 built for the running Node, in one run.
// Both sides open an in-memory database with the same 100,000-row table and register the
// same JS callbacks; each repetition times every case on both sides (alternating which
// goes first) and the ratio reported is the median of the per-repetition ratios
// addon/better-sqlite3 (lower is better; ≤ 1.00 means at least as fast).
//
//   node bench/functions.mjs [--reps N] [--rows N] [--json out.json]
//   node bench/all-nodes.mjs --bench functions [--nodes 22,24]

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { loadReference } from '../tools/reference.mjs';
import { intervalText, median, medianInterval } from './stats.mjs';

const require = createRequire(import.meta.url);
const { Database } = require('../lib/database/database.cjs');
const BetterSqlite3 = loadReference();

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const reps = Number(arg('reps', 7));
const rows = Number(arg('rows', 100_000));
const json = arg('json', null);

/** The same callbacks on either side. */
function open(Db) {
  const db = new Db(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER NOT NULL, s TEXT NOT NULL, b BLOB NOT NULL)');
  db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO t (x, s, b) SELECT i, 'item number ' || i, randomblob(16) FROM n`).run(rows);
  db.function('plus_one', { deterministic: true }, (x) => x + 1);
  db.function('text_length', { deterministic: true }, (s) => s.length);
  db.function('exclaim', { deterministic: true }, (s) => `${s}!`);
  db.function('padded', { deterministic: true }, (s) => s.padEnd(1000, '.'));
  db.function('blob_length', { deterministic: true }, (b) => b.length);
  db.aggregate('total', { start: 0, step: (total, x) => total + x });
  db.aggregate('moving', {
    start: 0,
    step: (total, x) => total + x,
    inverse: (total, x) => total - x,
  });
  db.table('numbers', {
    columns: ['n'],
    parameters: ['count'],
    *rows(count) {
      for (let n = 0; n < count; n++) yield [n];
    },
  });
  return db;
}

const CASES = [
  {
    name: 'scalar function, 100,000 calls (sum of f(x))',
    sql: 'SELECT sum(plus_one(x)) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'scalar function, 100,000 rows read (all() of f(x))',
    sql: 'SELECT plus_one(x) AS y FROM t',
    run: (s) => s.all().length,
  },
  {
    name: 'scalar function of a TEXT argument (sum of f(s))',
    sql: 'SELECT sum(text_length(s)) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'scalar function returning TEXT (sum of length(f(s)))',
    sql: 'SELECT sum(length(exclaim(s))) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'scalar function returning 1,000-character TEXT (sum of length(f(s)))',
    sql: 'SELECT sum(length(padded(s))) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'scalar function of a BLOB argument (sum of f(b))',
    sql: 'SELECT sum(blob_length(b)) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'aggregate over 100,000 rows',
    sql: 'SELECT total(x) FROM t',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'window aggregate (10-row frame, inverse) over 100,000 rows',
    sql: 'SELECT sum(m) FROM (SELECT moving(x) OVER (ORDER BY id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS m FROM t)',
    run: (s) => s.pluck().get(),
  },
  {
    name: 'virtual table scan, 100,000 rows',
    sql: `SELECT sum(n) FROM numbers(${rows})`,
    run: (s) => s.pluck().get(),
  },
];

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const ours = open(Database);
const theirs = open(BetterSqlite3);
const results = [];
for (const c of CASES) {
  const a = ours.prepare(c.sql);
  const b = theirs.prepare(c.sql);
  const expected = c.run(b);
  const got = c.run(a);
  if (got !== expected) throw new Error(`${c.name}: ${got} here, ${expected} from better-sqlite3`);
  // Warm both sides up (JIT, caches) before measuring.
  for (let i = 0; i < 3; i++) {
    c.run(a);
    c.run(b);
  }
  const ratios = [];
  const msOurs = [];
  const msTheirs = [];
  for (let r = 0; r < reps; r++) {
    let tOurs;
    let tTheirs;
    if (r % 2 === 0) {
      tOurs = time(() => c.run(a));
      tTheirs = time(() => c.run(b));
    } else {
      tTheirs = time(() => c.run(b));
      tOurs = time(() => c.run(a));
    }
    msOurs.push(tOurs);
    msTheirs.push(tTheirs);
    ratios.push(tOurs / tTheirs);
  }
  results.push({ name: c.name, ms: median(msOurs), baselineMs: median(msTheirs), ratio: median(ratios), interval: medianInterval(ratios) });
}
ours.close();
theirs.close();

console.log(`node ${process.versions.node}, ${rows} rows, ${reps} repetitions (median)`);
console.log('| case | this package (ms) | better-sqlite3 (ms) | ratio | its 95% interval |');
console.log('|---|---:|---:|---:|---|');
for (const r of results) {
  console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${r.baselineMs.toFixed(1)} | ${r.ratio.toFixed(2)} | ${intervalText(r.interval) || '-'} |`);
}
const geomean = Math.exp(results.reduce((sum, r) => sum + Math.log(r.ratio), 0) / results.length);
console.log(`geometric mean ${geomean.toFixed(2)} (worst ${Math.max(...results.map((r) => r.ratio)).toFixed(2)})`);
if (json) writeFileSync(json, JSON.stringify({ node: process.versions.node, rows, reps, results }, null, 2));
