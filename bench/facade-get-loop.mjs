// One prepared facade `get` in a loop, alone in its process: for counting instructions
// per call with callgrind (a run of many calls minus a run of few), where the table's
// timings are too noisy. The same statement runs on this package or on better-sqlite3
// built for the running Node.
//
//   node bench/facade-get-loop.mjs addon|better-sqlite3 [calls]
//   valgrind --tool=callgrind node --single-threaded bench/facade-get-loop.mjs addon 42000
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadReference } from '../tools/reference.mjs';

const [side = 'addon', callsArg = '10000'] = process.argv.slice(2);
const calls = Number(callsArg);
if (!['addon', 'better-sqlite3'].includes(side) || !Number.isInteger(calls) || calls < 0) {
  console.error('usage: node bench/facade-get-loop.mjs addon|better-sqlite3 [calls]');
  process.exit(2);
}
const Database = side === 'addon' ? (await import('../better-sqlite3.mjs')).default : loadReference();

const dir = mkdtempSync(join(tmpdir(), 'tfx-get-loop-'));
const db = new Database(join(dir, 'loop.db'));
db.pragma('journal_mode = WAL');
db.exec('CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT)');
const insert = db.prepare('INSERT INTO _meta (key, value) VALUES (?, ?)');
for (let i = 0; i < 100; i++) insert.run(`bench.key.${i}`, JSON.stringify({ i }));
const get = db.prepare('SELECT value FROM _meta WHERE key = ?');

let length = 0;
for (let i = 0; i < 20000; i++) length += get.get(`bench.key.${i % 100}`).value.length;
const started = process.hrtime.bigint();
for (let i = 0; i < calls; i++) length += get.get(`bench.key.${i % 100}`).value.length;
const ns = Number(process.hrtime.bigint() - started) / Math.max(calls, 1);
db.close();
rmSync(dir, { recursive: true, force: true });
console.log(`${side}: ${calls} calls, ${ns.toFixed(0)} ns per call (checksum ${length})`);
