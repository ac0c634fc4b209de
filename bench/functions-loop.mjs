// One user-callback query in a loop, on this package or on better-sqlite3, for profiling
// what a callback call costs (perf, callgrind): `scalar` runs SELECT sum(f(x)) and
// `aggregate` a JS aggregate, each over a 100,000-row table, 60 times.
//
//   node bench/functions-loop.mjs [scalar|aggregate] [--baseline]

import { createRequire } from 'node:module';

import { loadReference } from '../tools/reference.mjs';

const require = createRequire(import.meta.url);
const kind = process.argv[2] === 'aggregate' ? 'aggregate' : 'scalar';
const Database = process.argv.includes('--baseline') ? loadReference() : require('../lib/database.cjs').Database;

const db = new Database(':memory:');
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER NOT NULL)');
db.prepare('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) INSERT INTO t (x) SELECT i FROM n').run();
db.function('plus_one', (x) => x + 1);
db.aggregate('total', { start: 0, step: (total, x) => total + x });
const stmt = db.prepare(kind === 'aggregate' ? 'SELECT total(x) FROM t' : 'SELECT sum(plus_one(x)) FROM t').pluck();
let last;
for (let i = 0; i < 60; i++) last = stmt.get();
console.log(`${kind}: ${last}`);
db.close();
