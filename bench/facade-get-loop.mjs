// One prepared facade `get` (or `all`) in a loop, alone in its process: for counting
// instructions per call with callgrind (a run of many calls minus a run of few), where the
// table's timings are too noisy. The same statement runs on this package or on
// better-sqlite3 built for the running Node: a one-column row (`one`, the default), the
// six-column agents row of bench/cases.mjs `db.get6` (`six`), its three safe integers of
// `db.get bigint` (`bigint`), the one-column row's value alone (`pluck`), `SELECT 1`
// plucked with no parameter (`select1`: the call with the least of SQLite's work), an
// agents row of a TEXT and an INTEGER column as an array (`raw`), or the 32 KB BLOB of
// better-sqlite3's large_blob trial by its rowid (`blob`); or an `all()` of 20
// agents rows of three INTEGER columns (`all-int`), of a REAL and an INTEGER column
// (`all-real`), or of three safe integers as `db.all bigint` (`all-bigint`). The database
// is a file in WAL mode, or with `memory` last an in-memory one, where little of SQLite's
// work hides the call's own cost. Node's start-up varies by millions of instructions from
// run to run, so count many calls: 200,000 leave about 30 a call of it.
//
//   node bench/facade-get-loop.mjs addon|better-sqlite3 [calls] [one|six|bigint|pluck|select1|raw|blob|all-int|all-real|all-bigint] [file|memory]
//   valgrind --tool=callgrind node --single-threaded bench/facade-get-loop.mjs addon 202000 six (minus the same with 2000)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadReference } from '../tools/reference.mjs';

const [side = 'addon', callsArg = '10000', row = 'one', where = 'file'] = process.argv.slice(2);
const calls = Number(callsArg);
const ROW_NAMES = ['one', 'six', 'bigint', 'pluck', 'select1', 'raw', 'blob', 'all-int', 'all-real', 'all-bigint'];
if (
  !['addon', 'better-sqlite3'].includes(side) ||
  !Number.isInteger(calls) ||
  calls < 0 ||
  !ROW_NAMES.includes(row) ||
  !['file', 'memory'].includes(where)
) {
  console.error(`usage: node bench/facade-get-loop.mjs addon|better-sqlite3 [calls] [${ROW_NAMES.join('|')}] [file|memory]`);
  process.exit(2);
}
const Database = side === 'addon' ? (await import('../better-sqlite3.mjs')).default : loadReference();

const dir = mkdtempSync(join(tmpdir(), 'tfx-get-loop-'));
const db = new Database(where === 'memory' ? ':memory:' : join(dir, 'loop.db'));
if (where === 'file') db.pragma('journal_mode = WAL');
db.exec('CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT)');
const insert = db.prepare('INSERT INTO _meta (key, value) VALUES (?, ?)');
for (let i = 0; i < 100; i++) insert.run(`bench.key.${i}`, JSON.stringify({ i }));
db.exec(`CREATE TABLE agents (agent_id TEXT PRIMARY KEY, cli TEXT, pid INTEGER, status TEXT,
  last_seen_ms INTEGER, lease_expires_ms INTEGER, metadata_json TEXT)`);
const agent = db.prepare("INSERT INTO agents VALUES (?, 'claude', ?, 'online', ?, ?, '{}')");
const now = Date.now();
for (let i = 0; i < 100; i++) agent.run(`agent-${String(i).padStart(3, '0')}`, 1000 + i, now, now + 30000);
if (row === 'blob') {
  db.exec('CREATE TABLE large_blob (blob BLOB)');
  const blob = db.prepare('INSERT INTO large_blob VALUES (?)');
  for (let i = 0; i < 100; i++) blob.run(Buffer.from('this is the blob'.repeat(2048)));
}
const keyOf = (i) => {
  if (row === 'blob') return i + 1;
  return row === 'one' || row === 'pluck' ? `bench.key.${i}` : `agent-${String(i).padStart(3, '0')}`;
};
const keys = Array.from({ length: 100 }, (_, i) => keyOf(i));
const key = (i) => keys[i % 100];
const ROWS = {
  one: ['SELECT value FROM _meta WHERE key = ?', 'value'],
  six: ['SELECT agent_id, cli, pid, status, last_seen_ms, lease_expires_ms FROM agents WHERE agent_id = ?', 'status'],
  bigint: ['SELECT pid, last_seen_ms, lease_expires_ms FROM agents WHERE agent_id = ?', 'pid'],
  pluck: ['SELECT value FROM _meta WHERE key = ?', null],
  select1: ['SELECT 1', null],
  raw: ['SELECT agent_id, pid FROM agents WHERE agent_id = ?', 1],
  blob: ['SELECT blob FROM large_blob WHERE rowid = ?', 'blob'],
  'all-int': ['SELECT rowid, pid, last_seen_ms FROM agents ORDER BY rowid LIMIT 20', 'pid'],
  'all-real': ['SELECT pid / 3.0 AS share, pid FROM agents ORDER BY rowid LIMIT 20', 'pid'],
  'all-bigint': ['SELECT rowid, pid, last_seen_ms FROM agents ORDER BY rowid LIMIT 20', 'pid'],
};
const stmt = db.prepare(ROWS[row][0]);
if (row.endsWith('bigint')) stmt.safeIntegers();
if (row === 'pluck' || row === 'select1') stmt.pluck();
if (row === 'raw') stmt.raw();
const field = ROWS[row][1];
const byKey = field === null ? (i) => stmt.get(key(i)) : (i) => stmt.get(key(i))[field];
const get = row === 'select1' ? () => stmt.get() : byKey;
const read = row.startsWith('all-') ? (i) => stmt.all()[i % 20][field] : get;
const size = (v) => (typeof v === 'bigint' ? Number(v & 0xffn) : typeof v === 'number' ? v & 0xff : v.length);

let length = 0;
for (let i = 0; i < 20000; i++) length += size(read(i));
const started = process.hrtime.bigint();
for (let i = 0; i < calls; i++) length += size(read(i));
const ns = Number(process.hrtime.bigint() - started) / Math.max(calls, 1);
db.close();
rmSync(dir, { recursive: true, force: true });
console.log(`${side}: ${calls} calls, ${ns.toFixed(0)} ns per call (checksum ${length})`);
