// One user-callback query in a loop, on this package or on better-sqlite3, for profiling
// what a callback call costs (perf, callgrind): `scalar` runs SELECT sum(f(x)),
// `text` SELECT sum(f(s)) of a TEXT argument, `text-result` SELECT sum(length(f(s))) of a
// TEXT result (`long-text-result`: of 1,000 characters), `aggregate` a JS aggregate,
// `window` a JS window aggregate (10-row frame, inverse) and `rows` reads every row of
// f(x) with all(), each over a 100,000-row table, 60 times (`window` and `rows` 10 times),
// or `--times N` times (0: only the set-up, whose count a profile of N runs then
// subtracts).
//
//   node bench/functions-loop.mjs [scalar|text|text-result|long-text-result|aggregate|window|rows] [--baseline] [--times N]

import { createRequire } from 'node:module';

import { loadReference } from '../tools/reference.mjs';

const require = createRequire(import.meta.url);
const QUERIES = {
  scalar: ['SELECT sum(plus_one(x)) FROM t', 60],
  text: ['SELECT sum(text_length(s)) FROM t', 60],
  'text-result': ['SELECT sum(length(exclaim(s))) FROM t', 60],
  'long-text-result': ['SELECT sum(length(padded(s))) FROM t', 60],
  aggregate: ['SELECT total(x) FROM t', 60],
  window: ['SELECT sum(m) FROM (SELECT moving(x) OVER (ORDER BY id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS m FROM t)', 10],
  rows: ['SELECT plus_one(x) AS y FROM t', 10],
};
const kind = process.argv[2] in QUERIES ? process.argv[2] : 'scalar';
const Database = process.argv.includes('--baseline') ? loadReference() : require('../lib/database/database.cjs').Database;

const db = new Database(':memory:');
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER NOT NULL, s TEXT NOT NULL)');
db.prepare("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) INSERT INTO t (x, s) SELECT i, 'item number ' || i FROM n").run();
db.function('plus_one', (x) => x + 1);
db.function('text_length', (s) => s.length);
db.function('exclaim', (s) => `${s}!`);
db.function('padded', (s) => s.padEnd(1000, '.'));
db.aggregate('total', { start: 0, step: (total, x) => total + x });
db.aggregate('moving', { start: 0, step: (total, x) => total + x, inverse: (total, x) => total - x });
const [sql, usualTimes] = QUERIES[kind];
const timesAt = process.argv.indexOf('--times');
const times = timesAt > 0 ? Number(process.argv[timesAt + 1]) : usualTimes;
const stmt = db.prepare(sql).pluck();
const run = kind === 'rows' ? () => stmt.all().length : () => stmt.get();
let last;
for (let i = 0; i < times; i++) last = run();
console.log(`${kind}: ${last}`);
db.close();
