// The numbers a statement call leaves beside its result (run()'s lastInsertRowid, the
// shape of a one-column row) live in one array per JS environment: each worker thread
// gets its own, a worker that ends takes its own with it, and nothing JS does with the
// array can make a native call write where it must not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import test from 'node:test';
import { Worker } from 'node:worker_threads';

import { Database } from '../index.mjs';
import { tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const entry = require.resolve('../index.cjs');

/** Inserts `count` rows through run() and reads each back through a one-column get(). */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Database } = require(workerData.entry);
const db = new Database(workerData.file);
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
const read = db.prepare('SELECT v FROM t WHERE id = ?');
const seen = [];
for (let i = 0; i < workerData.count; i++) {
  const { lastInsertRowid } = insert.run(workerData.tag + i);
  seen.push([lastInsertRowid, read.get(lastInsertRowid)]);
}
db.close();
parentPort.postMessage(seen);
`;

function writer(file, tag, count) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WRITER, { eval: true, workerData: { entry, file, tag, count } });
    let result;
    worker.on('message', (m) => (result = m));
    worker.on('error', reject);
    worker.on('exit', (code) => (code === 0 ? resolve(result) : reject(new Error(`worker exited with ${code}`))));
  });
}

function assertWritten(seen, tag, count) {
  assert.equal(seen.length, count);
  seen.forEach(([rowid, row], i) => {
    assert.equal(rowid, i + 1);
    assert.deepEqual(row, { v: tag + i });
  });
}

test('each worker thread and the main thread read their own calls\' numbers', async (t) => {
  const dir = tempDir(t);
  const main = new Database(join(dir, 'main.db'));
  t.after(() => main.close());
  main.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = main.prepare('INSERT INTO t (v) VALUES (?)');
  const read = main.prepare('SELECT v FROM t WHERE id = ?');
  const running = [0, 1, 2].map((w) => writer(join(dir, `w${w}.db`), `w${w}-`, 300));
  // The main thread keeps writing while the workers run.
  const mine = [];
  for (let i = 0; i < 300; i++) {
    const { lastInsertRowid } = insert.run(`main-${i}`);
    mine.push([lastInsertRowid, read.get(lastInsertRowid)]);
    if (i % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  const results = await Promise.all(running);
  results.forEach((seen, w) => assertWritten(seen, `w${w}-`, 300));
  assertWritten(mine, 'main-', 300);
  // A worker started after the others ended gets slots of its own again.
  assertWritten(await writer(join(dir, 'late.db'), 'late-', 50), 'late-', 50);
  assert.deepEqual(insert.run('after'), { changes: 1, lastInsertRowid: 301 });
  assert.deepEqual(read.get(301), { v: 'after' });
});

test('detaching the slot buffer cannot make a call write out of bounds or crash', () => {
  // In a child process, whose end tells a crash (a signal) from a thrown error. From
  // Node 22, ArrayBuffer#transfer takes the buffer away from the array (Node 20 refuses
  // both ways): the array JS reads is then empty and calls may fail, but the native side
  // keeps writing to memory of its own.
  const script = `
    const native = require(${JSON.stringify(require.resolve('../lib/native.cjs'))});
    const { Database } = require(${JSON.stringify(entry)});
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const slots = native.resultSlots();
    if (slots !== native.resultSlots()) throw new Error('not one array per environment');
    try { structuredClone(slots.buffer, { transfer: [slots.buffer] }); } catch {}
    try { slots.buffer.transfer?.(); } catch {}
    for (let i = 0; i < 1000; i++) db.prepare('INSERT INTO t (v) VALUES (?)').run('x');
    try {
      console.log(db.prepare('SELECT count(*) AS n FROM t').pluck().get());
    } catch (error) {
      console.log(slots.length === 0 ? 'detached: ' + error.message : 'not detached: ' + error.stack);
    }
    for (let i = 0; i < 1000; i++) {
      try { db.prepare('SELECT v FROM t WHERE id = ?').get(i + 1); } catch {}
      try { db.prepare('SELECT id, v, v AS w FROM t WHERE id = ?').get(i + 1); } catch {}
      try { db.prepare('SELECT id, id AS w FROM t LIMIT 3').safeIntegers().all(); } catch {}
    }
    try {
      console.log(db.prepare('SELECT id FROM t LIMIT 2').safeIntegers().all().length);
    } catch (error) {
      console.log(slots.length === 0 ? 'detached: ' + error.message : 'not detached: ' + error.stack);
    }
    try {
      console.log(String(db.prepare('SELECT id, v FROM t WHERE id = 2').safeIntegers().get().id));
    } catch (error) {
      console.log(slots.length === 0 ? 'detached: ' + error.message : 'not detached: ' + error.stack);
    }
    try {
      console.log(JSON.stringify(db.prepare('SELECT id, id * 0.5 AS w FROM t WHERE id = 3').get()));
    } catch (error) {
      console.log(slots.length === 0 ? 'detached: ' + error.message : 'not detached: ' + error.stack);
    }
  `;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(child.signal, null, child.stderr);
  assert.equal(child.status, 0, child.stderr);
  // A row whose form was left in the detached slots cannot be read: a clear error, not a
  // wrong row. Where the buffer stays attached (Node 20), rows read as ever.
  // The same for BigInts a chunk of rows, or a lone row's maker, left there, and for a
  // lone row of numbers left there whole.
  const detached = "detached: This environment's result slots were detached .*";
  const attached = '1000\n2\n2\n{"id":3,"w":1.5}';
  assert.match(child.stdout.trim(), new RegExp(`^(${attached}|${detached}\n${detached}\n${detached}\n${detached})$`));
});

test('BigInts of many rows and of lone rows pass through the slots whole: past the lane\'s room, and with a read inside a user function between two rows', () => {
  const db = new Database(':memory:');
  const side = new Database(':memory:');
  const big = (i) => 2n ** 62n + BigInt(i) * 1000003n;
  db.exec('CREATE TABLE t (a INTEGER, b INTEGER, c TEXT)');
  side.exec('CREATE TABLE s (x INTEGER)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?)');
  const insertSide = side.prepare('INSERT INTO s VALUES (?)');
  for (let i = 0; i < 3000; i++) {
    insert.run(big(i), -big(i), `r${i}`);
    insertSide.run(-BigInt(i) - 7n);
  }
  const expected = Array.from({ length: 3000 }, (_, i) => ({ a: big(i), b: -big(i), c: `r${i}` }));
  // Chunks of three-value rows overrun the lane's room by a row's worth: those go as values.
  assert.deepEqual(db.prepare('SELECT a, b, c FROM t ORDER BY rowid').safeIntegers().all(), expected);
  assert.deepEqual(
    db.prepare('SELECT a, b FROM t ORDER BY rowid').safeIntegers().raw().all(),
    expected.map((r) => [r.a, r.b]),
  );
  // A user function reads many BigInt rows of another connection at every row, while the
  // outer read holds BigInts of its chunk: each read gets its own.
  const sideRows = side.prepare('SELECT x FROM s').safeIntegers().pluck();
  db.function('peek', (i) => sideRows.all()[Number(i) % 3000] + 0n === -BigInt(Number(i) % 3000) - 7n ? 1 : 0);
  const read = db.prepare('SELECT a, b, c, peek(rowid - 1) AS ok FROM t ORDER BY rowid').safeIntegers();
  assert.deepEqual(read.all(), expected.map((r) => ({ ...r, ok: 1 })));
  // A lone row's BigInts go through the lane to its form's maker: in get(), raw, an
  // iterator's rows, and after a user function that read BigInt rows in the same step.
  const one = db.prepare('SELECT a, b, c FROM t WHERE rowid = ?').safeIntegers();
  const oneRaw = db.prepare('SELECT c, a, b FROM t WHERE rowid = ?').safeIntegers().raw();
  const onePeek = db.prepare('SELECT a, peek(rowid - 1) AS ok, b FROM t WHERE rowid = ?').safeIntegers();
  for (const i of [0, 1, 1234, 2999]) {
    assert.deepEqual(one.get(i + 1), expected[i]);
    assert.deepEqual(oneRaw.get(i + 1), [expected[i].c, expected[i].a, expected[i].b]);
    assert.deepEqual(onePeek.get(i + 1), { a: expected[i].a, ok: 1, b: expected[i].b });
  }
  assert.deepEqual([...db.prepare('SELECT a, b, c FROM t ORDER BY rowid LIMIT 50').safeIntegers().iterate()], expected.slice(0, 50));
  // A number that safe integers leave a number (REAL), and a NULL, keep their places.
  assert.deepEqual(db.prepare('SELECT a, 0.5 AS r, NULL AS n, b FROM t WHERE rowid = 3').safeIntegers().get(), {
    a: expected[2].a,
    r: 0.5,
    n: null,
    b: expected[2].b,
  });
  db.close();
  side.close();
});

test('a lone row of numbers only, or of BigInts only, comes back whole through the lane in every row mode; any other value in it takes the maker', () => {
  const db = new Database(':memory:');
  const big = 2n ** 62n + 12345n;
  db.exec('CREATE TABLE t (a INTEGER, b REAL, c)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?)');
  insert.run(big, 0.25, 3n);
  insert.run(-1, -0.5, null);
  insert.run(2 ** 53 + 1, 1e308, 'x');
  const rows = [
    { a: Number(big), b: 0.25, c: 3 },
    { a: -1, b: -0.5, c: null },
    { a: 2 ** 53, b: 1e308, c: 'x' },
  ];
  const get = db.prepare('SELECT a, b, c FROM t WHERE rowid = ?');
  for (let i = 0; i < rows.length; i++) {
    assert.deepEqual(get.get(i + 1), rows[i]);
    assert.deepEqual(get.raw().get(i + 1), Object.values(rows[i]));
    assert.deepEqual(get.expand().get(i + 1), { t: rows[i] });
    get.expand(false);
  }
  // -0 stays -0 (deepEqual tells them apart through Object.is).
  assert.deepEqual(db.prepare('SELECT -0.0 AS z, 1 AS w').get(), { z: -0, w: 1 });
  // An iterator's rows: lane rows and maker rows in turn, each a row of its own.
  const all = db.prepare('SELECT a, b, c FROM t ORDER BY rowid');
  const seen = [...all.iterate()];
  assert.deepEqual(seen, rows);
  assert.notEqual(seen[0], seen[1]);
  // Safe integers: INTEGER values alone go through the lane as BigInts; a REAL beside
  // them takes the maker, where it stays a number.
  const safe = db.prepare('SELECT a, c FROM t WHERE rowid = ?').safeIntegers();
  assert.deepEqual(safe.get(1), { a: big, c: 3n });
  assert.deepEqual(safe.raw().get(1), [big, 3n]);
  assert.deepEqual(db.prepare('SELECT a, b FROM t WHERE rowid = 1').safeIntegers().get(), { a: big, b: 0.25 });
  assert.deepEqual(db.prepare('SELECT a, c FROM t WHERE rowid = 2').safeIntegers().get(), { a: -1n, c: null });
  // The widest lone row a maker takes (64 values), and one wider, which the filler builds.
  for (const width of [64, 65]) {
    const columns = Array.from({ length: width }, (_, i) => `${i} * 1.5 AS c${i}`).join(', ');
    const expected = Object.fromEntries(Array.from({ length: width }, (_, i) => [`c${i}`, i * 1.5]));
    assert.deepEqual(db.prepare(`SELECT ${columns}`).get(), expected);
  }
  // A lone lane row of another connection read inside a user function while the outer
  // lane row is being made, and a repeated key, which keeps its first place and last value.
  const side = new Database(':memory:');
  const inner = side.prepare('SELECT 7 AS x, 8.5 AS y');
  db.function('inner', () => inner.get().y);
  assert.deepEqual(db.prepare('SELECT inner() AS p, 1 AS q, 2 AS p').get(), { p: 2, q: 1 });
  assert.deepEqual(db.prepare('SELECT inner() AS p, 2 AS q').raw().get(), [8.5, 2]);
  side.close();
  db.close();
});

/** User callbacks in a worker: their call frame is the worker's slots. */
const CALLBACKS = `
const { parentPort, workerData } = require('node:worker_threads');
const { Database } = require(workerData.entry);
const db = new Database(':memory:');
const k = workerData.k;
db.function('scale', (x, y) => x * k + (typeof y === 'string' ? y.length : y));
db.aggregate('total', { start: () => k, step: (t, x) => t + x, inverse: (t, x) => t - x });
db.aggregate('texts', { start: '', step: (t, x) => t + x });
const rows = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) ';
const out = [];
for (let r = 0; r < 5; r++) {
  out.push(db.prepare(rows + "SELECT sum(scale(i, 'ab')), sum(scale(i, 1.5)), total(i), texts(i % 3) FROM n").raw().get());
  out.push(db.prepare(rows + 'SELECT sum(m) FROM (SELECT total(i) OVER (ORDER BY i ROWS 4 PRECEDING) AS m FROM n)').pluck().get());
}
db.close();
parentPort.postMessage(out);
`;

test('user callbacks in worker threads and the main thread at once each use their own call frame', async () => {
  const run = (k) => new Promise((resolve, reject) => {
    const worker = new Worker(CALLBACKS, { eval: true, workerData: { entry, k } });
    let result;
    worker.on('message', (m) => (result = m));
    worker.on('error', reject);
    worker.on('exit', (code) => (code === 0 ? resolve(result) : reject(new Error(`worker exited with ${code}`))));
  });
  const expected = (k) => {
    const n = 20000;
    const sum = (n * (n + 1)) / 2;
    let texts = '';
    for (let i = 1; i <= n; i++) texts += String(i % 3);
    let windows = 0;
    for (let i = 1; i <= n; i++) for (let j = Math.max(1, i - 4); j <= i; j++) windows += j;
    windows += n * k;
    return Array.from({ length: 5 }, () => [[sum * k + 2 * n, sum * k + 1.5 * n, k + sum, texts], windows]).flat();
  };
  const main = new Database(':memory:');
  main.function('busy_main', (x) => x + 1);
  const running = [2, 3, 5].map((k) => run(k));
  for (let i = 0; i < 20; i++) {
    assert.equal(main.prepare('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT sum(busy_main(i)) FROM n').pluck().get(), 501500);
  }
  main.close();
  const results = await Promise.all(running);
  results.forEach((result, i) => assert.deepEqual(result, expected([2, 3, 5][i])));
});
