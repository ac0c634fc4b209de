// Large results come back whole, in every row mode: a result is many values, never one
// JS string, so half a gigabyte of rows or one 90-million-character TEXT reads as
// better-sqlite3 reads it. Values longer than a JS string or Buffer can hold are refused
// by SQLite itself, with better-sqlite3's limit and error.
import assert from 'node:assert/strict';
import { constants } from 'node:buffer';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const Database = require('../better-sqlite3.cjs');

test('all() of 1,100 rows of 500,000 characters (550 MB) returns every row whole', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)');
  const texts = Array.from({ length: 26 }, (_, i) => String.fromCharCode(65 + i).repeat(500_000));
  const insert = db.prepare('INSERT INTO t (s) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 1100; i++) insert.run(texts[i % 26]);
  })();
  let rows = db.prepare('SELECT id, s FROM t ORDER BY id').all();
  assert.equal(rows.length, 1100);
  for (let i = 0; i < rows.length; i++) {
    assert.equal(rows[i].id, i + 1);
    assert.ok(rows[i].s === texts[i % 26], `row ${i + 1} differs`);
  }
  rows = null;
  let count = 0;
  for (const row of db.prepare('SELECT s FROM t').iterate()) {
    assert.ok(row.s === texts[count % 26]);
    count++;
  }
  assert.equal(count, 1100);
  db.close();
});

test('one 90-million-character TEXT through all, iterate, get, expand, raw, pluck and safeIntegers', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE h (n INTEGER, s TEXT)');
  const big = 'x'.repeat(45_000_000) + 'é'.repeat(45_000_000);
  db.prepare('INSERT INTO h VALUES (?, ?)').run(7, big);
  const sql = 'SELECT n, s FROM h';
  const reads = {
    all: () => db.prepare(sql).all()[0].s,
    iterate: () => [...db.prepare(sql).iterate()][0].s,
    get: () => db.prepare(sql).get().s,
    expand: () => db.prepare(sql).expand().all()[0].h.s,
    raw: () => db.prepare(sql).raw().all()[0][1],
    pluck: () => db.prepare('SELECT s FROM h').pluck().get(),
    safeIntegers: () => db.prepare(sql).safeIntegers().all()[0].s,
  };
  for (const [mode, read] of Object.entries(reads)) {
    const s = read();
    assert.equal(s.length, 90_000_000, mode);
    assert.ok(s === big, `${mode}: the text differs`);
  }
  assert.equal(db.prepare(sql).safeIntegers().get().n, 7n);
  db.close();
});

test('a 100 MB BLOB through all() and iterate() is one Buffer of its own', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE b (v BLOB)');
  const bytes = Buffer.alloc(100 * 2 ** 20);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i & 0xff;
  db.prepare('INSERT INTO b VALUES (?)').run(bytes);
  for (const v of [db.prepare('SELECT v FROM b').pluck().all()[0], [...db.prepare('SELECT v FROM b').iterate()][0].v]) {
    assert.ok(Buffer.isBuffer(v));
    assert.equal(v.byteOffset, 0);
    assert.equal(v.buffer.byteLength, bytes.length);
    assert.ok(v.equals(bytes));
  }
  db.close();
});

test('a value longer than JS can hold is refused by SQLite as better-sqlite3 refuses it, and the connection goes on', () => {
  const limit = Math.min(constants.MAX_STRING_LENGTH, constants.MAX_LENGTH, 2 ** 31 - 1);
  const db = new Database(':memory:');
  for (const sql of [`SELECT zeroblob(${limit + 1})`, `SELECT CAST(zeroblob(${limit + 1}) AS TEXT)`]) {
    assert.throws(() => db.prepare(sql).pluck().get(), (error) => {
      assert.equal(error.name, 'SqliteError');
      assert.equal(error.code, 'SQLITE_TOOBIG');
      assert.equal(error.message, 'string or blob too big');
      return true;
    });
  }
  // A string of more bytes than the limit (two UTF-8 bytes per character) cannot be bound.
  const wide = 'é'.repeat(Math.floor(limit / 2) + 1);
  db.exec('CREATE TABLE t (s)');
  for (const args of [[wide], [{ s: wide }]]) {
    const sql = typeof args[0] === 'string' ? 'INSERT INTO t VALUES (?)' : 'INSERT INTO t VALUES (@s)';
    assert.throws(() => db.prepare(sql).run(...args), { name: 'RangeError', message: 'The bound string, buffer, or bigint is too big' });
  }
  assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 0);
  assert.equal(db.prepare('SELECT 41 + 1').pluck().get(), 42);
  db.close();
});

test('long bound strings, which the statement keeps for SQLite to read in place, are stored and compared whole', () => {
  const seen = [];
  const db = new Database(':memory:', { verbose: (sql) => seen.push(sql) });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)');
  const texts = ['a'.repeat(100_000), 'é'.repeat(50_000), '😀'.repeat(30_000), 'b'.repeat(300)];
  const insert = db.prepare('INSERT INTO t (s) VALUES (?)');
  for (const text of texts) insert.run(text);
  // better-sqlite3's verbose SQL, its values cut at 32 bytes (SQLITE_TRACE_SIZE_LIMIT).
  assert.equal(seen.at(-1), `INSERT INTO t (s) VALUES ('${'b'.repeat(32)}'/*+268 bytes*/)`);
  assert.deepEqual(db.prepare('SELECT s FROM t ORDER BY id').pluck().all(), texts);

  // A permanent binding outlives many runs of other statements with long values.
  const count = db.prepare('SELECT count(*) FROM t WHERE s = ?').pluck().bind(texts[1]);
  for (let i = 0; i < 20; i++) {
    insert.run(`${texts[i % 4]}${i}`);
    assert.equal(count.get(), 1);
  }
  // An iterator compares every row with its bound text while other statements bind theirs
  // (writes while iterating need unsafe mode, as in better-sqlite3).
  db.unsafeMode(true);
  let matched = 0;
  for (const row of db.prepare('SELECT id, s = ? AS same FROM t').iterate(texts[0])) {
    insert.run(texts[2]);
    if (row.same === 1) matched++;
    if (row.id > 40) break;
  }
  assert.equal(matched, 1);
  db.unsafeMode(false);

  // A refused value after a long one leaves no binding behind; the next run binds anew.
  const pair = db.prepare('INSERT INTO t (id, s) VALUES (?, ?)');
  assert.throws(() => pair.run(texts[0], true), { name: 'TypeError', message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null' });
  pair.run(1000, texts[3]);
  assert.equal(db.prepare('SELECT s FROM t WHERE id = 1000').pluck().get(), texts[3]);
  // The same long value in several parameters, one of them bound to another value next.
  const both = db.prepare('SELECT ? = ? AS same, length(?) AS n');
  assert.deepEqual(both.get(texts[0], texts[0], texts[0]), { same: 1, n: 100_000 });
  assert.deepEqual(both.get(texts[0], 'c', texts[0]), { same: 0, n: 100_000 });
  db.close();
});
