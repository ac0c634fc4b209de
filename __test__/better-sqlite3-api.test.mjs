// Differential tests of better-sqlite3 12's API beyond plain statements: safe integers
// (BigInt), unsafe mode and what an open iterator blocks, the `verbose` logger, a
// Database from `serialize()`'s bytes, `loadExtension`, and `SqliteError`. Each script
// runs against better-sqlite3 (the reference for the running Node) and against this
// package's Database, through ESM and through CommonJS; every outcome (value, JS type,
// key order, prototype, error class, name, code and message) must be identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Database, createStore } from '../index.mjs';
import { BetterSqlite3, differentialTest, outcome, referenceSkip, repoRoot, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const CommonJsDatabase = require('../better-sqlite3.cjs');

/** `script` with better-sqlite3 and with this package's ESM and CommonJS entries. */
const differential = (name, script) =>
  differentialTest(name, script, [['ESM', Database], ['CommonJS', CommonJsDatabase]]);

const BIG = 2n ** 53n + 1n;
const MAX = 2n ** 63n - 1n;
const MIN = -(2n ** 63n);

differential('safe integers: BigInt in every row mode, toggles, defaults and lastInsertRowid', (D, dir, step) => {
  const db = new D(join(dir, 's.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, b BLOB, z)');
  const ins = db.prepare('INSERT INTO t (id, n, r, s, b, z) VALUES (?, ?, ?, ?, ?, ?)');
  step('insert big', () => ins.run(BIG, MAX, 1.5, 'x', Buffer.from([1, 2]), null));
  step('insert min', () => ins.run(3n, MIN, -0, '', Buffer.alloc(0), 7));
  step('insert safe run', () => ins.safeIntegers().run(MAX, 0n, 2, 'y', null, 2n ** 40n));
  step('safe run toggled off', () => ins.safeIntegers(false).run(BIG + 1n, 1, 1, 'z', null, null));
  const sel = db.prepare('SELECT * FROM t ORDER BY id');
  step('plain get loses precision', () => sel.get());
  step('safeIntegers() returns this', () => sel.safeIntegers() === sel);
  step('safe get', () => sel.get());
  step('safe all', () => sel.all());
  step('safe iterate', () => [...sel.iterate()]);
  step('safe raw get', () => sel.raw().get());
  step('safe raw all', () => sel.all());
  step('safe raw iterate', () => [...sel.iterate()]);
  step('safe pluck all', () => sel.pluck().all());
  step('safe pluck get', () => sel.get());
  step('safe pluck iterate', () => [...sel.iterate()]);
  step('safe expand get', () => sel.expand().get());
  step('safe expand all', () => sel.all());
  step('safe expand iterate', () => [...sel.iterate()]);
  step('expand(false) keeps safe', () => sel.expand(false).get());
  step('safeIntegers(false)', () => sel.safeIntegers(false).all());
  step('safeIntegers(true)', () => sel.safeIntegers(true).pluck().all());
  step('safeIntegers bad arg', () => sel.safeIntegers('yes'));
  step('safeIntegers undefined arg', () => sel.safeIntegers(undefined));
  step('columns unaffected', () => sel.columns());
  const one = db.prepare('SELECT n FROM t WHERE id = ?').safeIntegers();
  step('one column safe get', () => one.get(BIG));
  step('one column safe get none', () => one.get(99));
  step('one column safe all', () => one.all(3));
  step('no rows safe all', () => db.prepare('SELECT * FROM t WHERE 0').safeIntegers().all());
  step('no rows safe iterate', () => [...db.prepare('SELECT * FROM t WHERE 0').safeIntegers().iterate()]);
  step('safe pluck iterate of empty texts and NULLs', () => [...db.prepare("SELECT '' UNION ALL SELECT NULL UNION ALL SELECT ''").safeIntegers().pluck().iterate()]);
  step('safe raw iterate of an empty text', () => [...db.prepare("SELECT '' AS v").safeIntegers().raw().iterate()]);
  step('aliases and duplicate names', () => db.prepare('SELECT n AS a, id AS a, 2 AS "1" FROM t').safeIntegers().all());
  step('expressions', () => db.prepare("SELECT 1 + 1, 2.0, -9223372036854775808, typeof(?), ?").safeIntegers().get(1n, MIN));
  step('bound with bind()', () => db.prepare('SELECT ? AS v').safeIntegers().bind(MAX).get());
  step('named BigInt', () => db.prepare('SELECT @a AS a, :b AS b').safeIntegers().get({ a: MIN, b: 5n }));
  step('array of BigInt', () => db.prepare('SELECT ?, ?').safeIntegers().raw().get([1n, 2n]));
  step('bigint too big', () => db.prepare('SELECT ?').get(2n ** 63n));
  step('bigint too small', () => db.prepare('SELECT ?').get(MIN - 1n));
  step('bigint too big in object', () => db.prepare('SELECT @x').get({ x: -(2n ** 64n) }));
  step('bigint too big stays unbound', () => db.prepare('SELECT ?').pluck().get(0n));

  // Results larger than the native side's shared buffer (it grows), and small ones after.
  db.exec(`CREATE TABLE many (i INTEGER, f REAL, s TEXT, b BLOB);
    INSERT INTO many SELECT value * 4294967296 * 1000, value / 4.0, 'row ' || value, CASE WHEN value % 3 = 0 THEN x'00ff' END
    FROM (WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < 3000) SELECT value FROM c)`);
  const many = db.prepare('SELECT * FROM many ORDER BY i').safeIntegers();
  step('large safe all', () => many.all());
  step('small safe get after', () => one.get(3));
  step('large safe raw all', () => many.raw().all());
  step('large safe pluck all', () => many.pluck().all());
  step('larger again', () => db.prepare('SELECT i, i + 1, i + 2, s FROM many').safeIntegers().all().length);
  step('text only', () => db.prepare("SELECT 'a' AS x, 'b' AS y UNION ALL SELECT 'c', x'01'").safeIntegers().all());

  step('defaultSafeIntegers returns this', () => db.defaultSafeIntegers() === db);
  const after = db.prepare('SELECT id, n FROM t ORDER BY id');
  step('prepared after default', () => after.all());
  step('earlier statement keeps its own', () => sel.safeIntegers(false).raw().get());
  step('pragma with default', () => db.pragma('user_version'));
  step('pragma simple with default', () => db.pragma('page_size', { simple: true }));
  step('run with default', () => db.exec('CREATE TABLE u (n)').prepare('INSERT INTO u (n) VALUES (1)').run());
  step('defaultSafeIntegers(false)', () => db.defaultSafeIntegers(false).prepare('SELECT max(id) FROM t').pluck().get());
  step('defaultSafeIntegers(true)', () => db.defaultSafeIntegers(true).prepare('SELECT max(id) FROM t').pluck().get());
  step('defaultSafeIntegers bad arg', () => db.defaultSafeIntegers(1));
  step('transaction with safe statements', () => db.transaction(() => db.prepare('INSERT INTO u (n) VALUES (?)').run(MAX))());

  const it = db.prepare('SELECT id FROM t').safeIntegers().iterate();
  step('iterator next', () => it.next());
  const locked = db.prepare('SELECT 1');
  const it2 = locked.iterate();
  step('safeIntegers while iterating', () => locked.safeIntegers());
  step('iterator keeps its mode', () => it2.next());
  it.return();
  it2.return();
  db.close();
  step('defaultSafeIntegers after close', () => db.defaultSafeIntegers(false) === db);
  step('safeIntegers after close', () => locked.safeIntegers(true) === locked);
  step('safe get after close', () => locked.get());
});

differential('BLOBs of every size come back as Buffers: each row mode, iterators, a simple pragma', (D, dir, step) => {
  const db = new D(join(dir, 'blobs.db'));
  db.exec('CREATE TABLE b (id INTEGER PRIMARY KEY, v BLOB, w BLOB)');
  const insert = db.prepare('INSERT INTO b (v, w) VALUES (?, ?)');
  // Around the size a BLOB of many rows crosses as an ArrayBuffer (1,024 bytes).
  for (const n of [0, 1, 16, 1023, 1024, 1025, 40000]) insert.run(Buffer.alloc(n, n % 251), Buffer.alloc(n % 7, 3));
  const one = db.prepare('SELECT v FROM b WHERE id = ?');
  const two = db.prepare('SELECT v, w FROM b WHERE id = ?');
  for (let id = 1; id <= 7; id++) {
    step(`get ${id}`, () => one.get(id));
    step(`pluck ${id}`, () => one.pluck().get(id));
    step(`raw ${id}`, () => one.raw().get(id));
    step(`expand ${id}`, () => one.expand().get(id));
    one.raw(false);
    step(`two ${id}`, () => two.get(id));
  }
  step('iterate', () => [...db.prepare('SELECT v FROM b').iterate()]);
  step('iterate pluck', () => [...db.prepare('SELECT v FROM b').pluck().iterate()]);
  step('all', () => db.prepare('SELECT v, w FROM b').all());
  step('simple pragma', () => db.pragma('user_version', { simple: true }));
  step('simple pragma, no row', () => db.pragma('table_info(none)', { simple: true }));
});

differential('every count of arguments, in every call and row mode, and past the room read inline', (D, dir, step) => {
  const db = new D(join(dir, 'counts.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, c)');
  // 0 to 12 positional parameters: a call passes its key and these, around the eight
  // arguments the native side reads without a second look.
  for (let n = 0; n <= 12; n++) {
    const marks = Array.from({ length: n }, () => '?').join(', ');
    const values = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? `s${i}` : null));
    const select = db.prepare(`SELECT ${n === 0 ? "'none'" : marks}`);
    step(`get ${n}`, () => select.get(...values));
    step(`all ${n}`, () => select.all(...values));
    step(`iterate ${n}`, () => [...select.iterate(...values)]);
    step(`raw ${n}`, () => select.raw().get(...values));
    step(`pluck ${n}`, () => select.pluck().all(...values));
    step(`as an array ${n}`, () => select.expand().get(values));
    select.expand(false);
    step(`one too many ${n}`, () => select.get(...values, 1));
    if (n > 0) step(`one too few ${n}`, () => select.get(...values.slice(1)));
    step(`run ${n}`, () => db.prepare(`INSERT INTO t (a) VALUES (json_array(${n === 0 ? '' : marks}))`).run(...values));
  }
  // Plain values of every kind, then objects among them (read another way), in either order
  // with a value that cannot be bound.
  const three = db.prepare('SELECT ?, ?, ?');
  step('plain kinds', () => three.raw().get(1.5, 'two', 3n));
  step('null and undefined', () => three.raw().get(null, undefined, -0));
  step('a buffer among them', () => three.raw().get(1, Buffer.from('ab'), 'c'));
  step('an array among them', () => three.raw().get(1, [2, 3]));
  step('a boolean first, an array after', () => three.raw().get(true, [2, 3]));
  step('an array first, a boolean after', () => three.raw().get([1, 2], true));
  step('an object after plain values', () => three.raw().get(1, 2, { a: 1 }));
  step('a BigInt too big', () => three.raw().get(1, 2n ** 64n, 3));
  step('too many, the last unbindable', () => three.raw().get(1, 2, 3, {}));
  step('numbered parameters', () => db.prepare('SELECT ?2, ?1').raw().get(1, 2));
  step('numbered and plain', () => db.prepare('SELECT ?1, ?').raw().get(1, 2));
  // Named parameters, from an object and mixed with positional ones.
  const named = db.prepare('SELECT @a AS a, $b AS b, :c AS c, ? AS d');
  step('named', () => named.get({ a: 1, b: 'two', c: null }, 4));
  step('named, missing', () => named.get({ a: 1, b: 'two' }, 4));
  step('named, safe integers', () => named.safeIntegers().raw().get(5, { a: 1, b: 2n, c: 3 }));
  step('bound once, then called bare', () => db.prepare('SELECT ?, ?').bind(1, 2).raw().get());
  step('bound once, then called with more', () => db.prepare('SELECT ?').bind(1).get(2));
  step('rows written', () => db.prepare('SELECT * FROM t').all());
});

differential('lone rows of numbers and one other value: each place, kind and row mode', (D, dir, step) => {
  const db = new D(join(dir, 'held.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, c)');
  const insert = db.prepare('INSERT INTO t (a, b, c) VALUES (?, ?, ?)');
  // One value that is not a number at each place, of each kind; then rows the maker makes.
  const rows = [
    ['text', 2, 3.5], [1, 'text', 3.5], [1, 2, 'text'], [null, 2, 3.5], [1, null, 3.5],
    [1, 2, ''], [1, 2, 'ü€😀'], [2n ** 60n, 'big', 1.5], [1.5, 2n, 'x'],
    [Buffer.from('blob'), 2, 3.5], ['two', 'texts', 3.5], [null, null, 1],
  ];
  for (const row of rows) insert.run(...row);
  const one = db.prepare('SELECT a, b, c FROM t WHERE id = ?');
  for (let id = 1; id <= rows.length; id++) {
    step(`flat ${id}`, () => one.get(id));
    step(`raw ${id}`, () => one.raw().get(id));
    step(`expand ${id}`, () => one.raw(false).expand().get(id));
    one.expand(false);
    step(`safe integers ${id}`, () => one.safeIntegers().get(id));
    step(`safe integers, raw ${id}`, () => one.raw().get(id));
    one.raw(false).safeIntegers(false);
  }
  step('iterate', () => [...db.prepare('SELECT a, b, c FROM t').iterate()]);
  step('iterate, raw', () => [...db.prepare('SELECT a, b, c FROM t').raw().iterate()]);
  step('a computed row', () => db.prepare("SELECT 1 AS x, upper('y') AS y, 2.5 AS z").get());
  // The widest row a maker takes, and one past it, each with one string among numbers.
  for (const width of [64, 65]) {
    const columns = Array.from({ length: width }, (_, i) => (i === width - 2 ? `'s' AS c${i}` : `${i} AS c${i}`));
    step(`${width} columns`, () => db.prepare(`SELECT ${columns.join(', ')}`).raw().get());
  }
});

differential('unsafe mode: what an open iterator blocks, with and without it', (D, dir, step) => {
  const db = new D(join(dir, 'u.db'));
  db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)');
  const other = db.prepare('SELECT count(*) AS n FROM t');
  const write = db.prepare('INSERT INTO t VALUES (?)');
  const probes = () => ({
    'run other': () => write.run(9),
    'get other': () => other.get(),
    'all other': () => other.all(),
    'iterate other': () => other.iterate().return(),
    exec: () => db.exec('SELECT 1') === db,
    'exec write': () => db.exec('INSERT INTO t VALUES (10)') === db,
    pragma: () => db.pragma('user_version'),
    'pragma write': () => db.pragma('user_version = 3'),
    prepare: () => db.prepare('SELECT 2').source,
    transaction: () => db.transaction(() => 1)(),
    serialize: () => db.serialize().length > 0,
    'loadExtension arg': () => db.loadExtension('no-such-extension'),
    close: () => db.close() === db,
    inTransaction: () => db.inTransaction,
  });
  for (const unsafe of [false, true]) {
    step(`unsafeMode(${unsafe}) returns this`, () => db.unsafeMode(unsafe) === db);
    const reader = db.prepare('SELECT x FROM t ORDER BY x');
    const it = reader.iterate();
    step(`${unsafe} first row`, () => it.next());
    step(`${unsafe} stmt busy`, () => reader.busy);
    step(`${unsafe} same statement get`, () => reader.get());
    step(`${unsafe} same statement run`, () => reader.run());
    step(`${unsafe} same statement pluck`, () => reader.pluck());
    step(`${unsafe} same statement bind`, () => reader.bind());
    for (const [label, fn] of Object.entries(probes())) step(`${unsafe} ${label}`, fn);
    step(`${unsafe} rest of rows`, () => [...it]);
    step(`${unsafe} after the iterator`, () => write.run(11));
    step(`${unsafe} count`, () => other.get());
  }
  step('unsafeMode()', () => db.unsafeMode() === db);
  step('unsafeMode bad arg', () => db.unsafeMode('no'));
  // DEFENSIVE follows unsafe mode: writable_schema is refused while it is on.
  step('unsafe writable_schema', () => {
    db.pragma('writable_schema = ON');
    return db.pragma('writable_schema', { simple: true });
  });
  db.pragma('writable_schema = OFF');
  step('safe again', () => db.unsafeMode(false) === db);
  step('defensive writable_schema', () => {
    db.pragma('writable_schema = ON');
    return db.pragma('writable_schema', { simple: true });
  });
  step('iterator over many rows while writing in unsafe mode', () => {
    db.unsafeMode(true);
    const seen = [];
    for (const row of db.prepare('SELECT x FROM t ORDER BY rowid LIMIT 4').iterate()) {
      seen.push(row.x);
      write.run(row.x * 100);
    }
    db.unsafeMode(false);
    return seen;
  });
  db.close();
  step('unsafeMode after close', () => db.unsafeMode(true) === db);
});

differential('verbose: what the logger is called with, when, and its errors', (D, dir, step) => {
  const log = [];
  let hook = null;
  const verbose = function (...args) {
    log.push([this === undefined ? 'undefined this' : typeof this, ...args]);
    if (hook) hook(args[0]);
  };
  step('verbose not a function', () => new D(':memory:', { verbose: 'yes' }));
  step('verbose null', () => new D(':memory:', { verbose: null }).open);
  const db = new D(join(dir, 'v.db'), { verbose });
  step('exec', () => db.exec('CREATE TABLE t (x, y);  INSERT INTO t VALUES (1, 2); -- c\n SELECT 1') === db);
  const ins = db.prepare('INSERT INTO t VALUES (?, @y)');
  step('prepare logs nothing', () => log.length);
  step('run', () => ins.run(1.5, { y: "it's" }));
  step('run bigint and blob', () => ins.run(5n, { y: Buffer.from('ab') }));
  step('get', () => db.prepare('SELECT * FROM t WHERE x = ?').get(1));
  step('all', () => db.prepare('SELECT count(*) FROM t').pluck().all());
  step('iterate logs at first next', () => {
    const it = db.prepare('SELECT x FROM t WHERE x > ?').iterate(0);
    const before = log.length;
    it.next();
    const first = log.length;
    it.next();
    it.return();
    return [before, first, log.length];
  });
  step('bound statement', () => db.prepare('SELECT ? + ?').bind(1, 2).pluck().get());
  step('pragma', () => db.pragma('user_version'));
  step('pragma simple', () => db.pragma('user_version', { simple: true }));
  const tx = db.transaction((fail) => {
    ins.run(7, { y: null });
    if (fail) throw new Error('undo');
  });
  step('transaction', () => tx(false));
  step('transaction rolled back', () => tx(true));
  step('nested transaction', () => db.transaction(() => tx.immediate(false))());
  step('nested transaction rolled back', () => db.transaction(() => {
    try {
      tx.exclusive(true);
    } catch {}
  })());
  step('deferred', () => tx.deferred(false));
  step('long text is cut as SQLite cuts it', () => db.prepare('SELECT ?').pluck().get('x'.repeat(100)));
  hook = () => {
    throw new Error('logger says no');
  };
  step('logger throws in run', () => ins.run(8, { y: 8 }));
  step('nothing was written', () => db.prepare('SELECT count(*) FROM t WHERE x = 8').pluck().get());
  step('logger throws in exec', () => db.exec('INSERT INTO t VALUES (9, 9)') === db);
  step('logger throws in iterate', () => {
    const it = db.prepare('SELECT 1').iterate();
    try {
      it.next();
    } catch (e) {
      return [e.message, it.next()];
    }
  });
  step('logger throws in transaction', () => tx(false));
  step('still not in a transaction', () => db.inTransaction);
  hook = () => db.prepare('SELECT 1');
  step('logger prepares a used statement: busy', () => db.prepare('SELECT 2').get());
  hook = () => db.prepare('SELECT 99');
  step('logger prepares: busy', () => db.prepare('SELECT 2').get());
  const plucked = db.prepare('SELECT 5');
  hook = () => plucked.pluck();
  step('logger sets a mode: busy', () => db.prepare('SELECT 2').get());
  hook = () => plucked.safeIntegers();
  step('logger sets safe integers: busy', () => db.prepare('SELECT 2').get());
  hook = () => plucked.columns();
  step('logger reads columns: busy', () => db.prepare('SELECT 2').get());
  const other = new D(':memory:');
  hook = () => other.prepare('SELECT 1').pluck().get();
  step('logger uses another database', () => db.prepare('SELECT 2').get());
  hook = () => db.exec('SELECT 1');
  step('logger execs: busy', () => db.prepare('SELECT 3').get());
  hook = () => ins.run(1, { y: 1 });
  step('logger runs: busy', () => db.exec('SELECT 4') === db);
  hook = null;
  step('usable after', () => db.prepare('SELECT count(*) FROM t').pluck().get());
  step('the whole log', () => log);
});

differential('new Database(buffer): serialize() round trips, readonly, errors', (D, dir, step) => {
  const src = new D(join(dir, 'src.db'));
  src.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1), ('two'), (x'03')");
  const bytes = src.serialize();
  const mem = new D(bytes);
  step('properties', () => [mem.name, mem.memory, mem.readonly, mem.open, mem.inTransaction]);
  step('rows', () => mem.prepare('SELECT * FROM t').all());
  step('writable', () => mem.prepare('INSERT INTO t VALUES (4)').run());
  step('source untouched', () => src.prepare('SELECT count(*) FROM t').pluck().get());
  step('buffer untouched', () => new D(bytes).prepare('SELECT count(*) FROM t').pluck().get());
  step('grows', () => {
    mem.exec(`INSERT INTO t SELECT hex(randomblob(500)) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) SELECT i FROM c)`);
    return mem.prepare('SELECT count(*) FROM t').pluck().get();
  });
  step('serialize again', () => new D(mem.serialize()).prepare('SELECT count(*) FROM t').pluck().get());
  const ro = new D(bytes, { readonly: true });
  step('readonly properties', () => [ro.name, ro.memory, ro.readonly]);
  step('readonly read', () => ro.prepare('SELECT count(*) FROM t').pluck().get());
  step('readonly write', () => ro.prepare('INSERT INTO t VALUES (5)').run());
  step('readonly exec', () => ro.exec('CREATE TABLE u (y)'));
  step('without new', () => D(bytes).prepare('SELECT 1 AS one').get());
  step('with options', () => new D(bytes, { fileMustExist: true, timeout: 10 }).memory);
  step('options still checked', () => new D(bytes, { timeout: -1 }));
  step('readOnly misspelt', () => new D(bytes, { readOnly: true }));
  step('empty buffer', () => {
    const db = new D(Buffer.alloc(0));
    return [db.memory, db.prepare('SELECT count(*) FROM sqlite_master').pluck().get()];
  });
  step('garbage buffer opens', () => new D(Buffer.from('not a database file at all, no')).open);
  step('garbage buffer read', () => new D(Buffer.from('not a database file at all, no')).prepare('SELECT * FROM sqlite_master'));
  step('a Uint8Array is a file name', () => new D(new Uint8Array(bytes)));
  step('transactions in memory', () => {
    const db = new D(bytes);
    db.transaction(() => db.exec('DELETE FROM t'))();
    return db.prepare('SELECT count(*) FROM t').pluck().get();
  });
  step('close', () => mem.close().open);
  // SQLite cannot read a WAL-mode image in memory; with the header's file format bytes
  // set back to 1 (rollback journal) it can.
  const wal = new D(join(dir, 'wal.db'));
  wal.pragma('journal_mode = WAL');
  wal.exec('CREATE TABLE w (x); INSERT INTO w VALUES (1)');
  const image = wal.serialize();
  step('WAL image', () => new D(image).prepare('SELECT * FROM w'));
  step('WAL image read-only', () => new D(image, { readonly: true }).prepare('SELECT * FROM w'));
  step('WAL image as rollback journal', () => {
    image[18] = 1;
    image[19] = 1;
    return new D(image).prepare('SELECT * FROM w').all();
  });
});

differential('SqliteError: construction, shape and the errors SQLite raises', (D, dir, step) => {
  const E = D.SqliteError;
  step('called without new', () => {
    const e = E('message here', 'SQLITE_ERROR');
    return [e instanceof E, e instanceof Error, Object.getPrototypeOf(e) === E.prototype, e.name, e.message, e.code];
  });
  step('own properties', () => {
    const e = new E('m', 'C');
    return [Object.keys(e), Object.getOwnPropertyNames(e).sort(), Object.getOwnPropertyDescriptor(e, 'message')];
  });
  step('prototype name', () => Object.getOwnPropertyDescriptor(E.prototype, 'name'));
  step('statics', () => [E.name, E.length, Object.getPrototypeOf(E) === Error, Object.getPrototypeOf(E.prototype) === Error.prototype]);
  step('toString', () => String(new E('boom', 'X')));
  step('stack', () => new E('boom', 'X').stack.split('\n')[0]);
  step('message coerced', () => new E(42, 'X').message);
  step('message undefined', () => new E(undefined, 'X').message);
  step('code not a string', () => new E('m', 1));
  step('code missing', () => E('m'));
  step('name writable', () => {
    const e = new E('m', 'C');
    e.name = 'Other';
    return [e.name, String(e)];
  });
  step('isError', () => (typeof Error.isError === 'function' ? Error.isError(new E('m', 'C')) : 'no Error.isError'));
  step('subclass', () => {
    class Mine extends E {}
    const e = new Mine('m', 'C');
    return [e instanceof E, e.constructor.name, e.message, e.code];
  });
  const db = new D(join(dir, 'e.db'));
  db.exec('CREATE TABLE t (x UNIQUE)');
  db.prepare('INSERT INTO t VALUES (1)').run();
  const caught = (fn) => {
    try {
      fn();
    } catch (e) {
      return [e instanceof E, e instanceof Error, Object.getPrototypeOf(e) === E.prototype, Object.keys(e), e.name, e.code, e.message, String(e)];
    }
  };
  step('constraint', () => caught(() => db.prepare('INSERT INTO t VALUES (1)').run()));
  step('syntax', () => caught(() => db.prepare('SELEC 1')));
  step('no table', () => caught(() => db.exec('SELECT * FROM nope')));
});

/** Builds the test extension with the machine's C compiler into `dir`, or returns why not. */
function buildExtension(dir) {
  const ext = process.platform === 'win32' ? 'dll' : process.platform === 'darwin' ? 'dylib' : 'so';
  const out = join(dir, `tfxext.${ext}`);
  const source = join(repoRoot, '__test__', 'fixtures', 'extension', 'tfxext.c');
  const flags = process.platform === 'darwin' ? ['-dynamiclib'] : ['-shared', '-fPIC'];
  const cc = process.env.CC || 'cc';
  const r = spawnSync(cc, [...flags, '-I', join(repoRoot, 'deps', 'sqlite3'), '-o', out, source], { encoding: 'utf8' });
  if (r.error) return { why: `no C compiler (${cc}: ${r.error.code}) to build the test extension` };
  if (r.status !== 0) return { why: `${cc} could not build the test extension: ${r.stderr.split('\n')[0]}` };
  return { path: out };
}

test('loadExtension: default and named entry points, failures', { skip: referenceSkip }, (t) => {
  const built = buildExtension(tempDir(t));
  if (built.why) {
    t.skip(built.why);
    return;
  }
  // Each implementation loads its own copy of the library: one image per SQLite copy (an
  // extension keeps the API table of the SQLite that loaded it).
  const record = (D, label) => {
    const dir = join(tempDir(t), label);
    mkdirSync(dir);
    const lib = join(dir, built.path.split(/[\\/]/).pop());
    copyFileSync(built.path, lib);
    const steps = [];
    const step = (name, fn) => steps.push([name, outcome(fn)]);
    const db = new D(':memory:');
    try {
      step('before loading', () => db.prepare('SELECT tfx_answer()'));
      step('default entry point', () => db.loadExtension(lib) === db);
      step('its function', () => db.prepare('SELECT tfx_answer() AS a').get());
      step('named entry point', () => db.loadExtension(lib, 'tfx_twice_init') === db);
      step('its function', () => db.prepare('SELECT tfx_twice(21) AS a').safeIntegers().get());
      step('refusing entry point', () => db.loadExtension(lib, 'tfx_refusing_init'));
      step('no such entry point', () => {
        try {
          db.loadExtension(lib, 'tfx_missing_init');
        } catch (e) {
          return [e.constructor.name, e.code, e.message.replaceAll(dir, '<dir>')];
        }
      });
      step('no such file', () => {
        try {
          db.loadExtension(join(dir, 'missing.so'));
        } catch (e) {
          return [e.constructor.name, e.code, e.message.includes('missing.so')];
        }
      });
      step('SQL load_extension stays off', () => db.prepare('SELECT load_extension(?)').get(lib));
      step('first argument', () => db.loadExtension());
      step('second argument', () => db.loadExtension(lib, undefined));
      step('second argument number', () => db.loadExtension(lib, 1));
      const it = db.prepare('SELECT 1').iterate();
      step('while iterating', () => db.loadExtension(lib));
      it.return();
      db.close();
      step('after close', () => db.loadExtension(lib));
    } finally {
      if (db.open) db.close();
    }
    return steps;
  };
  const reference = record(BetterSqlite3, 'reference');
  const ours = record(Database, 'ours');
  assert.deepEqual(ours, reference);
  assert.deepEqual(ours[2][1], { value: ['object', 'Object', [['a', ['number', '42']]]] });
});

test('store.db: safe integers, unsafe mode, loadExtension arguments and a deserialized copy of the store', (t) => {
  const store = createStore(join(tempDir(t), 'hub.db'));
  t.after(() => store.close());
  const { db } = store;
  store.registerAgent({ agent_id: 'a1', cli: 'codex', pid: 7 });
  const pid = db.prepare('SELECT pid, last_seen_ms FROM agents WHERE agent_id = ?').safeIntegers();
  const row = pid.get('a1');
  assert.equal(row.pid, 7n);
  assert.equal(typeof row.last_seen_ms, 'bigint');
  assert.equal(db.prepare("SELECT pid FROM agents WHERE agent_id = 'a1'").pluck().get(), 7);
  db.defaultSafeIntegers(true);
  assert.equal(db.prepare("SELECT pid FROM agents WHERE agent_id = 'a1'").pluck().get(), 7n);
  // The store's own methods are unaffected by the facade's default.
  assert.equal(store.getAgent('a1').pid, 7);
  db.defaultSafeIntegers(false);
  const info = db.prepare("INSERT INTO _meta (key, value) VALUES ('b3api', '1')").safeIntegers().run();
  assert.equal(typeof info.lastInsertRowid, 'bigint');
  assert.equal(info.changes, 1);

  const it = db.prepare('SELECT agent_id FROM agents').iterate();
  assert.throws(() => db.exec('SELECT 1'), { name: 'TypeError', message: 'This database connection is busy executing a query' });
  db.unsafeMode(true);
  assert.equal(db.exec("UPDATE _meta SET value = '2' WHERE key = 'b3api'"), db);
  db.unsafeMode(false);
  it.return();
  assert.throws(() => db.loadExtension(1), { name: 'TypeError', message: 'Expected first argument to be a string' });

  // The store's file is in WAL mode: as in better-sqlite3, its image opens in memory once
  // the header says rollback journal (bytes 18 and 19).
  const image = db.serialize();
  assert.throws(() => new Database(image).prepare('SELECT 1 FROM agents'), { name: 'SqliteError', code: 'SQLITE_CANTOPEN' });
  image[18] = 1;
  image[19] = 1;
  const copy = new Database(image, { readonly: true });
  t.after(() => copy.close());
  assert.equal(copy.prepare("SELECT value FROM _meta WHERE key = 'b3api'").pluck().get(), '2');
  assert.equal(copy.prepare('SELECT agent_id FROM agents').pluck().get(), 'a1');
  assert.throws(() => copy.exec('DELETE FROM agents'), { name: 'SqliteError', code: 'SQLITE_READONLY' });
});

test('safe-integer reads in worker threads and the main thread at once', async (t) => {
  const { Worker } = await import('node:worker_threads');
  const script = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Database } = require(workerData.entry);
    const db = new Database(':memory:');
    const read = db.prepare('WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < ?) SELECT v * ? AS v, ? AS tag FROM c').safeIntegers();
    let sum = 0n;
    for (let i = 1; i <= 200; i++) for (const row of read.all(i * 10, workerData.factor, workerData.tag)) sum += row.v;
    parentPort.postMessage(String(sum));`;
  const entry = require.resolve('../index.cjs');
  const expected = (factor) => {
    let sum = 0n;
    for (let i = 1n; i <= 200n; i++) sum += ((i * 10n * (i * 10n + 1n)) / 2n) * factor;
    return String(sum);
  };
  const run = (factor, tag) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(script, { eval: true, workerData: { entry, factor, tag } });
      worker.on('message', resolve);
      worker.on('error', reject);
    });
  const main = new Database(':memory:');
  t.after(() => main.close());
  const running = [run(3n, 'w1'), run(2n ** 40n, 'w2')];
  const mine = main.prepare('SELECT ? AS v').safeIntegers();
  for (let i = 0; i < 500; i++) assert.deepEqual(mine.get(BigInt(i) * MAX / 1000n), { v: (BigInt(i) * MAX) / 1000n });
  assert.deepEqual(await Promise.all(running), [expected(3n), expected(2n ** 40n)]);
});

test('SqliteError from the native side is the exported class, also without better-sqlite3', () => {
  const db = new Database(':memory:');
  try {
    db.exec('SELEC 1');
    assert.fail('expected a throw');
  } catch (e) {
    assert.ok(e instanceof Database.SqliteError);
    assert.equal(Object.getPrototypeOf(e), CommonJsDatabase.SqliteError.prototype);
    assert.deepEqual(Object.keys(e), ['code']);
    assert.equal(e.code, 'SQLITE_ERROR');
    assert.match(e.stack, /^SqliteError: near "SELEC": syntax error/);
  } finally {
    db.close();
  }
});

differential('safe-integer rows past the row-shape registry (keys travel with the rows)', (D, dir, step) => {
  const db = new D(':memory:');
  // Every statement below has a shape of its own: past 4096 of them a row carries its keys.
  for (let i = 0; i < 4200; i++) db.prepare(`SELECT ${i} AS "k${i}"`).safeIntegers().get();
  step('get', () => db.prepare('SELECT 1 AS "late a", 2.5 AS "late b", \'x\' AS "late c"').safeIntegers().get());
  step('all', () => db.prepare('SELECT 1 AS "later a", \'y\' AS "later b" UNION ALL SELECT 2, 3').safeIntegers().all());
  step('iterate', () => [...db.prepare('SELECT 7 AS "latest"').safeIntegers().iterate()]);
  step('pragma', () => db.defaultSafeIntegers().pragma('table_list').length > 0);
});
