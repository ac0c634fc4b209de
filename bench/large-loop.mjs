// better-sqlite3's large values (a 32 KB BLOB of its large_blob table, a 32 KB TEXT of
// its large_text table) and a 512 KB TEXT, read and written in one process by this
// package and by better-sqlite3 built for the running Node, alternating in nine rounds:
// the median and range of this package's time over better-sqlite3's, on in-memory
// databases (no file system calls to blur the copies both sides make). `get` reads one
// row, `all` 100 rows, `run` inserts one row with a named parameter.
//
//   node bench/large-loop.mjs [--only blob|text]
//
// `--alone` runs one case on one side and nothing else, for counting instructions with
// callgrind (a run of many calls minus a run of few):
//
//   valgrind --tool=callgrind node --single-threaded bench/large-loop.mjs --alone addon 6000 "text 32 KB" run
import { createRequire } from 'node:module';

import { loadReference } from '../tools/reference.mjs';

const require = createRequire(import.meta.url);
const Ours = require('../better-sqlite3.cjs');
const BetterSqlite3 = loadReference();

const VALUES = {
  'blob 32 KB': { type: 'BLOB', value: () => Buffer.from('this is the blob'.repeat(2048)) },
  'text 32 KB': { type: 'TEXT', value: () => 'this is the text'.repeat(2048) },
  'text 512 KB': { type: 'TEXT', value: () => 'this is the text'.repeat(32768), rounds: 0.1 },
};

function open(Database, { type, value }) {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE large (v ${type})`);
  const v = value();
  const insert = db.prepare('INSERT INTO large (v) VALUES (?)');
  for (let i = 0; i < 1000; i++) insert.run(v);
  return {
    get: db.prepare('SELECT v FROM large WHERE rowid = ?'),
    all: db.prepare('SELECT v FROM large WHERE rowid >= ? LIMIT 100'),
    run: db.prepare('INSERT INTO large (v) VALUES (@v)'),
    trim: db.prepare('DELETE FROM large WHERE rowid > 1000'),
    row: { v },
  };
}

const CASES = {
  get: { calls: 5000, op: (s) => (i) => s.get.get((i % 1000) + 1) },
  all: { calls: 300, op: (s) => (i) => s.all.all((i % 900) + 1) },
  run: {
    calls: 5000,
    op: (s) => (i) => {
      s.run.run(s.row);
      if (i % 500 === 499) s.trim.run();
    },
  },
};

/** Nanoseconds per call of `f` over `calls` calls. */
function time(f, calls) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) f(i);
  return Number(process.hrtime.bigint() - started) / calls;
}

const alone = process.argv.indexOf('--alone');
if (alone > 0) {
  const [side, calls, value, kind] = process.argv.slice(alone + 1);
  if (!['addon', 'better-sqlite3'].includes(side) || !VALUES[value] || !CASES[kind]) {
    console.error('usage: node bench/large-loop.mjs --alone addon|better-sqlite3 <calls> "<value>" get|all|run');
    process.exit(2);
  }
  const f = CASES[kind].op(open(side === 'addon' ? Ours : BetterSqlite3, VALUES[value]));
  for (let i = 0; i < Number(calls); i++) f(i);
  process.exit(0);
}

const at = process.argv.indexOf('--only');
const only = at > 0 ? process.argv[at + 1] : '';
console.log(`Node ${process.versions.node}: this package's time over better-sqlite3's, in memory, nine rounds`);
for (const [name, spec] of Object.entries(VALUES)) {
  if (!name.startsWith(only)) continue;
  const ours = open(Ours, spec);
  const theirs = open(BetterSqlite3, spec);
  for (const [kind, { calls: full, op }] of Object.entries(CASES)) {
    const calls = Math.max(10, Math.round(full * (spec.rounds ?? 1)));
    const [a, b] = [op(ours), op(theirs)];
    time(a, calls);
    time(b, calls);
    const ratios = [];
    for (let round = 0; round < 9; round++) ratios.push(time(a, calls) / time(b, calls));
    ratios.sort((x, y) => x - y);
    console.log(`${name} ${kind}: median ${ratios[4].toFixed(2)} (range ${ratios[0].toFixed(2)}-${ratios[8].toFixed(2)})`);
  }
}
