// better-sqlite3's large_blob value (32 KB) read and written in one process by this
// package and by better-sqlite3 built for the running Node, alternating in nine rounds:
// the median and range of this package's time over better-sqlite3's for `get` of one
// row, `all()` of 100 rows and `run` with a named parameter, on in-memory databases
// (no file system calls to blur the copies both sides make).
//
//   node bench/blob-loop.mjs
import { createRequire } from 'node:module';

import { loadReference } from '../tools/reference.mjs';

const require = createRequire(import.meta.url);
const Ours = require('../better-sqlite3.cjs');
const BetterSqlite3 = loadReference();

function open(Database) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE large_blob (blob BLOB)');
  const value = Buffer.from('this is the blob'.repeat(2048));
  const insert = db.prepare('INSERT INTO large_blob (blob) VALUES (?)');
  for (let i = 0; i < 1000; i++) insert.run(value);
  return {
    get: db.prepare('SELECT blob FROM large_blob WHERE rowid = ?'),
    all: db.prepare('SELECT blob FROM large_blob WHERE rowid >= ? LIMIT 100'),
    run: db.prepare('INSERT INTO large_blob (blob) VALUES (@blob)'),
    value,
  };
}

const CASES = {
  get: { calls: 5000, op: (s) => (i) => s.get.get((i % 1000) + 1) },
  all: { calls: 300, op: (s) => (i) => s.all.all((i % 900) + 1) },
  run: { calls: 5000, op: (s) => () => s.run.run({ blob: s.value }) },
};

/** Nanoseconds per call of `f` over `calls` calls. */
function time(f, calls) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) f(i);
  return Number(process.hrtime.bigint() - started) / calls;
}

const ours = open(Ours);
const theirs = open(BetterSqlite3);
console.log(`Node ${process.versions.node}: this package's time over better-sqlite3's, 32 KB BLOB, nine rounds`);
for (const [name, { calls, op }] of Object.entries(CASES)) {
  const [a, b] = [op(ours), op(theirs)];
  time(a, calls);
  time(b, calls);
  const ratios = [];
  for (let round = 0; round < 9; round++) ratios.push(time(a, calls) / time(b, calls));
  ratios.sort((x, y) => x - y);
  console.log(`${name}: median ${ratios[4].toFixed(2)} (range ${ratios[0].toFixed(2)}-${ratios[8].toFixed(2)})`);
}
