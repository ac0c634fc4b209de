// Differential tests: the same scripted operations run against better-sqlite3 12 and
// against this package's `Database` (the class behind `store.db`); every outcome (value,
// key order, JS type, error class, name, code and message) must be identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { Database, createStore } from '../index.mjs';
import { BetterSqlite3, differentialTest, outcome, referenceSkip, tempDir } from './helpers.mjs';

/** `script` with better-sqlite3 and with this package's `Database`. */
const differential = (name, script) => differentialTest(name, script, [['Database', Database]]);

const BIND_VALUES = {
  int: 42,
  real: 1.5,
  negZero: -0,
  nan: NaN,
  inf: Infinity,
  big53: 2 ** 53 + 2,
  bigint: 123n,
  bigintMax: 2n ** 63n - 1n,
  bigintTooBig: 2n ** 63n,
  bigintTooSmall: -(2n ** 63n) - 1n,
  str: 'hello',
  empty: '',
  unicode: 'é中😀',
  loneHigh: 'a\ud800b',
  loneLow: '\udc00',
  nul: 'a\u0000b',
  buffer: Buffer.from([0, 1, 255]),
  emptyBuffer: Buffer.alloc(0),
  uint8: new Uint8Array([7, 8]),
  nul2: null,
  undef: undefined,
  boolTrue: true,
  boolFalse: false,
  object: { a: 1 },
  nullProto: Object.assign(Object.create(null), { a: 1 }),
  array: [1, 2],
  emptyArray: [],
  date: new Date(0),
  fn: () => 1,
  symbol: Symbol('s'),
  map: new Map(),
};
// Strings whose UTF-8 form ends on either side of the inline read buffer (64 bytes), with
// a multi-byte character or a lone surrogate straddling the edge.
for (const n of [58, 59, 60, 61, 62, 63, 64, 65, 66, 127, 255, 256, 257, 4000]) {
  BIND_VALUES[`ascii${n}`] = 'x'.repeat(n);
  BIND_VALUES[`twoByte${n}`] = 'x'.repeat(n - 1) + 'é';
  BIND_VALUES[`emoji${n}`] = 'x'.repeat(n - 2) + '😀';
  BIND_VALUES[`lone${n}`] = 'x'.repeat(n - 1) + '\ud800';
}

differential('binding of every JS type (positional)', (D, dir, step) => {
  const db = new D(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v, txt TEXT, i INTEGER, r REAL)');
  const sel = db.prepare('SELECT typeof(?) AS t, quote(?1) AS q, hex(?1) AS h');
  const ins = db.prepare('INSERT INTO t (v, txt, i, r) VALUES (?1, ?1, ?1, ?1)');
  const back = db.prepare('SELECT v, txt, i, r, typeof(v) AS tv, typeof(txt) AS tt, typeof(i) AS ti, typeof(r) AS tr FROM t WHERE id = ?');
  for (const [name, value] of Object.entries(BIND_VALUES)) {
    step(`select ${name}`, () => db.prepare('SELECT typeof(?) AS t, quote(?) AS q, hex(?) AS h').get(value, value, value));
    step(`select1 ${name}`, () => sel.get(value));
    step(`insert ${name}`, () => ins.run(value));
    step(`back ${name}`, () => back.get(db.prepare('SELECT max(id) FROM t').pluck().get()));
  }
});

differential('binding rules: counts, arrays, named objects', (D, dir, step) => {
  const db = new D(':memory:');
  const two = db.prepare('SELECT ? AS a, ? AS b');
  step('too few', () => two.get(1));
  step('too many', () => two.get(1, 2, 3));
  step('spread array', () => two.get([1, 2]));
  step('array + value', () => two.get([1], 'x'));
  step('array too long', () => two.get([1, 2, 3]));
  step('nested array', () => two.get([[1], 2]));
  step('object to anonymous', () => two.get({ a: 1 }, 2));
  const named = db.prepare('SELECT @a AS a, :b AS b, $c AS c');
  step('named ok', () => named.get({ a: 1, b: 'x', c: null, extra: true }));
  step('named missing', () => named.get({ a: 1, b: 2 }));
  step('named undefined present', () => named.get({ a: undefined, b: 2, c: 3 }));
  step('named inherited key', () => named.get(Object.assign(Object.create({ a: 1 }), { b: 2, c: 3 })));
  step('named null proto', () => named.get(Object.assign(Object.create(null), { a: 1, b: 2, c: 3 })));
  step('named two objects', () => named.get({ a: 1 }, { b: 2, c: 3 }));
  step('named none', () => named.get());
  step('named positional', () => named.get(1, 2, 3));
  step('named Date', () => named.get(new Date(0)));
  step('named class instance', () => named.get(new (class P { constructor() { this.a = 1; this.b = 2; this.c = 3; } })()));
  step('named bad value', () => named.get({ a: true, b: 2, c: 3 }));
  const mixed = db.prepare('SELECT ? AS p, @n AS n, ? AS q');
  step('mixed', () => mixed.get(1, { n: 'n' }, 2));
  step('mixed missing object', () => mixed.get(1, 2));
  const numbered = db.prepare('SELECT ?2 AS two, ?1 AS one');
  step('numbered positional', () => numbered.get(1, 2));
  step('numbered as named', () => numbered.get({ 1: 'a', 2: 'b' }));
  const none = db.prepare('SELECT 1 AS x');
  step('no params, one given', () => none.get(1));
  step('no params, undefined given', () => none.get(undefined));
  step('no params, empty array', () => none.get([]));
  step('no params, object', () => none.get({}));
});

differential('results: types, column names, pluck, raw, expand, columns', (D, dir, step) => {
  const db = new D(join(dir, 'r.db'));
  db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT, data BLOB, score REAL);
           CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER, name TEXT);
           INSERT INTO a VALUES (1, 'x', x'0102', 1.25), (2, NULL, NULL, -0.0), (3, 'z', x'', 1e300);
           INSERT INTO b VALUES (10, 1, 'bx'), (11, 3, 'bz');`);
  step('all', () => db.prepare('SELECT * FROM a ORDER BY id').all());
  step('get none', () => db.prepare('SELECT * FROM a WHERE id = 99').get());
  step('all none', () => db.prepare('SELECT * FROM a WHERE id = 99').all());
  step('big ints', () => db.prepare('SELECT 9007199254740993 AS big, -9223372036854775808 AS min, 9223372036854775807 AS max, 1e21 AS e, 5e-7 AS s, -0.0 AS nz').get());
  step('text bytes', () => db.prepare("SELECT CAST(x'eda080' AS TEXT) AS lone, CAST(x'ff41' AS TEXT) AS bad, 'a' || char(0) || 'b' AS nul, char(8232) AS ls").get());
  step('text bytes all/raw/expand/iterate', () => {
    const sql = "SELECT CAST(x'eda080' AS TEXT) AS lone, CAST(x'ff41c3' AS TEXT) AS bad, CAST(x'f09f9880' AS TEXT) AS ok, x'00ff' AS blob, 2.5 AS r, -0.0 AS nz";
    return [db.prepare(sql).all(), db.prepare(sql).raw().all(), db.prepare(sql).expand().get(), [...db.prepare(sql).iterate()], db.prepare(sql).pluck().all()];
  });
  step('duplicate names all', () => db.prepare('SELECT a.id, b.id, a.name, b.name AS id, 1 AS "2", 0 AS "1" FROM a JOIN b ON b.a_id = a.id').all());
  step('duplicate names', () => db.prepare('SELECT a.id, b.id, a.name, b.name AS id FROM a JOIN b ON b.a_id = a.id').all());
  step('numeric names', () => db.prepare('SELECT 1, 2 AS "0", 3 AS z, 4 AS "10"').get());
  step('pluck', () => db.prepare('SELECT name, id FROM a ORDER BY id').pluck().all());
  step('pluck get', () => db.prepare('SELECT data FROM a WHERE id=1').pluck().get());
  step('pluck(false)', () => db.prepare('SELECT name, id FROM a ORDER BY id').pluck().pluck(false).all());
  step('raw', () => db.prepare('SELECT * FROM a ORDER BY id').raw().all());
  step('raw then pluck(false)', () => db.prepare('SELECT * FROM a ORDER BY id').raw().pluck(false).get());
  step('raw(false)', () => db.prepare('SELECT * FROM a ORDER BY id').raw(true).raw(false).get());
  step('expand', () => db.prepare('SELECT a.*, b.name, 1 + 1 AS two, b.id FROM a LEFT JOIN b ON b.a_id = a.id ORDER BY a.id').expand().all());
  step('pluck bad arg', () => db.prepare('SELECT 1').pluck('yes'));
  step('raw on writer', () => db.prepare('DELETE FROM a WHERE 0').raw());
  step('pluck on writer', () => db.prepare('DELETE FROM a WHERE 0').pluck());
  step('expand on writer', () => db.prepare('DELETE FROM a WHERE 0').expand());
  step('columns', () => db.prepare('SELECT a.id, b.name AS n, 1 AS one FROM a, b').columns());
  step('columns on writer', () => db.prepare('DELETE FROM a WHERE 0').columns());
  step('reader flags', () => {
    const s = db.prepare('SELECT 1');
    const w = db.prepare('INSERT INTO a (name) VALUES (?)');
    const r = db.prepare('INSERT INTO a (name) VALUES (?) RETURNING id');
    return [s.reader, s.readonly, w.reader, w.readonly, r.reader, r.readonly, s.source, s.database === db, Object.keys(s), s.busy];
  });
  step('RETURNING get', () => db.prepare("INSERT INTO a (name) VALUES ('ret') RETURNING id, name").get());
  step('iterate', () => [...db.prepare('SELECT id, name FROM a ORDER BY id').iterate()]);
  step('iterate pluck', () => [...db.prepare('SELECT id FROM a ORDER BY id').pluck().iterate()]);
  step('iterate break', () => {
    const s = db.prepare('SELECT id FROM a ORDER BY id');
    const out = [];
    for (const row of s.iterate()) {
      out.push(row);
      break;
    }
    return [out, s.busy, s.get()];
  });
  step('busy while iterating', () => {
    const s = db.prepare('SELECT id FROM a ORDER BY id');
    const it = s.iterate();
    const seen = [it.next(), s.busy];
    for (const f of [
      () => s.get(),
      () => s.iterate(),
      () => s.pluck(),
      () => db.prepare('SELECT 1').get(),
      () => db.prepare("UPDATE a SET name = 'q' WHERE id = 1").run(),
      () => db.exec('SELECT 1'),
      () => db.pragma('user_version'),
      () => db.close(),
    ]) {
      seen.push(outcome(f));
    }
    seen.push(it.return(), it.next(), s.busy, db.prepare('UPDATE a SET name = name').run());
    return seen;
  });
  step('get on writer', () => db.prepare('DELETE FROM a WHERE 0').get());
  step('all on writer', () => db.prepare('DELETE FROM a WHERE 0').all());
  step('iterate on writer', () => db.prepare('DELETE FROM a WHERE 0').iterate());
  step('bind', () => {
    const s = db.prepare('SELECT ? AS v').bind('bound');
    return [s.get(), s.all(), outcome(() => s.get(1)), outcome(() => s.bind(2))];
  });
  step('bind error', () => db.prepare('SELECT ? AS v').bind(true));
  step('bind error then use', () => {
    const s = db.prepare('SELECT ? AS v');
    const e = outcome(() => s.bind());
    return [e, s.get(5)];
  });
  step('safeIntegers(false)', () => db.prepare('SELECT 1 AS x').safeIntegers(false).get());
});

differential('run(): changes and lastInsertRowid', (D, dir, step) => {
  const db = new D(join(dir, 'run.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE, n INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0))');
  db.exec('CREATE TABLE log (x); CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.v); END;');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  step('insert 1', () => ins.run('a'));
  step('insert 2', () => ins.run('b'));
  step('explicit rowid', () => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(1000n, 'c'));
  step('update many', () => db.prepare('UPDATE t SET n = n + 1').run());
  step('update none', () => db.prepare('UPDATE t SET n = 1 WHERE id = -1').run());
  step('delete', () => db.prepare('DELETE FROM t WHERE v = ?').run('b'));
  step('run on reader', () => db.prepare('SELECT * FROM t').run());
  step('run DDL', () => db.prepare('CREATE TABLE u (x)').run());
  step('unique', () => ins.run('a'));
  step('check', () => db.prepare('UPDATE t SET n = -1').run());
  step('not null', () => db.prepare('INSERT INTO t (v, n) VALUES (?, ?)').run('z', null));
  step('datatype mismatch', () => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run('x', 'y'));
  step('after errors', () => db.prepare('SELECT id, v, n FROM t ORDER BY id').all());
  step('log', () => db.prepare('SELECT x FROM log').pluck().all());
  step('upsert named', () =>
    db.prepare('INSERT INTO t (v, n) VALUES (@v, @n) ON CONFLICT(v) DO UPDATE SET n = excluded.n').run({ v: 'a', n: 5 }),
  );
});

differential('exec, prepare errors and pragma', (D, dir, step) => {
  const db = new D(join(dir, 'e.db'));
  step('exec returns this', () => db.exec('-- comment\nCREATE TABLE t (x); /* c */ INSERT INTO t VALUES (1);;; INSERT INTO t VALUES (2)') === db);
  step('exec partial failure', () => db.exec('INSERT INTO t VALUES (3); INSERT INTO nope VALUES (1); INSERT INTO t VALUES (4)'));
  step('after partial', () => db.prepare('SELECT x FROM t').pluck().all());
  step('exec syntax', () => db.exec('CREATE TABLE'));
  step('exec empty', () => db.exec('') === db);
  step('exec non-string', () => db.exec(1));
  step('prepare non-string', () => db.prepare(Buffer.from('SELECT 1')));
  step('prepare empty', () => db.prepare(' ; -- x'));
  step('prepare two', () => db.prepare('SELECT 1; SELECT 2'));
  step('prepare trailing comment', () => db.prepare('SELECT 1 AS x; -- done\n /* more */ ;').get());
  step('prepare unterminated comment', () => db.prepare('SELECT 1 AS x; /* open').get());
  step('prepare after NUL', () => db.prepare('SELECT 1 AS x\u0000; garbage').get());
  step('syntax error', () => db.prepare('SELEKT 1'));
  step('no such column', () => db.prepare('SELECT nope FROM t'));
  step('pragma rows', () => db.pragma('table_info(t)'));
  step('pragma simple', () => db.pragma('user_version', { simple: true }));
  step('pragma set', () => db.pragma('user_version = 7'));
  step('pragma set simple', () => db.pragma('user_version = 8', { simple: true }));
  step('pragma read', () => db.pragma('user_version'));
  step('pragma journal', () => db.pragma('journal_mode = WAL'));
  step('pragma bad simple', () => db.pragma('user_version', { simple: 1 }));
  step('pragma bad options', () => db.pragma('user_version', 'x'));
  step('pragma non-string', () => db.pragma(1));
  step('pragma unknown', () => db.pragma('no_such_pragma'));
  step('pragma error', () => db.pragma('table_info('));
  step('pragma null options', () => db.pragma('foreign_keys', null));
});

differential('transactions', (D, dir, step) => {
  const db = new D(join(dir, 'tx.db'));
  db.exec('CREATE TABLE t (v TEXT)');
  const ins = db.prepare('INSERT INTO t VALUES (?)');
  const rows = () => db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all();
  step('not a function', () => db.transaction(1));
  const tx = db.transaction(function (a, b) {
    ins.run(a);
    if (b === 'throw') throw new RangeError('inner');
    return [this?.tag ?? null, db.inTransaction, arguments.length];
  });
  step('shape', () => [typeof tx.deferred, typeof tx.immediate, typeof tx.exclusive, tx.database === db, tx.name, tx.length, Object.keys(tx)]);
  step('variant shape', () => [tx.immediate.deferred === tx.deferred, tx.immediate.default === tx, Object.keys(tx.exclusive)]);
  step('commit', () => tx('a'));
  step('this', () => tx.call({ tag: 'T' }, 'b', 'x'));
  step('rollback', () => tx('c', 'throw'));
  step('rows 1', rows);
  step('immediate', () => tx.immediate('d'));
  step('exclusive', () => tx.exclusive('e'));
  step('deferred', () => tx.deferred('f'));
  const nested = db.transaction((inner) => {
    ins.run('outer');
    try {
      tx(inner, 'throw');
    } catch (e) {
      ins.run(`caught ${e.message}`);
    }
    tx(`${inner}-ok`);
    return db.inTransaction;
  });
  step('nested', () => nested('n'));
  step('rows 2', rows);
  step('nested outer throws', () =>
    db.transaction(() => {
      tx('lost');
      throw new Error('outer');
    })(),
  );
  step('promise', () => db.transaction(async () => ins.run('promised'))());
  step('thenable', () => db.transaction(() => ({ then() {} }))());
  step('in tx after promise', () => db.inTransaction);
  step('rows 3', rows);
  step('manual commit inside', () =>
    db.transaction(() => {
      ins.run('manual');
      db.exec('COMMIT');
    })(),
  );
  step('manual rollback then throw', () =>
    db.transaction(() => {
      ins.run('manual2');
      db.exec('ROLLBACK');
      throw new Error('after rollback');
    })(),
  );
  step('begin inside', () => db.transaction(() => db.exec('BEGIN'))());
  step('rows 4', rows);
  step('immediate inside open transaction', () => {
    db.exec('BEGIN');
    const r = tx.immediate('savepointed');
    const inTx = db.inTransaction;
    db.exec('ROLLBACK');
    return [r, inTx, db.inTransaction];
  });
  step('constraint inside', () => {
    db.exec('CREATE TABLE u (k PRIMARY KEY)');
    return db.transaction(() => {
      db.prepare('INSERT INTO u VALUES (1)').run();
      db.prepare('INSERT INTO u VALUES (1)').run();
    })();
  });
  step('u rows', () => db.prepare('SELECT count(*) FROM u').pluck().get());
  step('rows 5', rows);
});

differential('Database object, options and use after close', (D, dir, step) => {
  const path = join(dir, 'c.db');
  const db = new D(path);
  step('props', () => [db.name === path, db.open, db.inTransaction, db.readonly, db.memory, Object.keys(db)]);
  const mem = new D(':memory:');
  step('memory props', () => [mem.name, mem.memory, mem.readonly]);
  step('anonymous', () => [new D().name, new D().memory, new D('').memory, new D(' :memory: ').name]);
  step('readonly memory', () => new D(':memory:', { readonly: true }));
  step('readOnly misspelled', () => new D(path, { readOnly: true }));
  step('memory option', () => new D(path, { memory: true }));
  step('bad readonly', () => new D(path, { readonly: 1 }));
  step('bad timeout', () => new D(path, { timeout: -1 }));
  step('float timeout', () => new D(path, { timeout: 1.5 }));
  step('huge timeout', () => new D(path, { timeout: 2 ** 31 }));
  step('bad options', () => new D(path, 'x'));
  step('bad filename', () => new D(5));
  step('missing dir', () => new D(join(dir, 'no', 'such', 'x.db')));
  step('fileMustExist', () => new D(join(dir, 'absent.db'), { fileMustExist: true }));
  step('fileMustExist ok', () => new D(path, { fileMustExist: true }).open);
  step('without new', () => D(':memory:').open);
  db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
  const ro = new D(path, { readonly: true });
  step('readonly props', () => [ro.readonly, ro.prepare('SELECT x FROM t').pluck().get()]);
  step('readonly write', () => ro.prepare('INSERT INTO t VALUES (2)').run());
  step('readonly exec', () => ro.exec('CREATE TABLE z (x)'));
  const reader = db.prepare('SELECT x FROM t');
  const writer = db.prepare('INSERT INTO t VALUES (?)');
  const tx = db.transaction(() => 1);
  step('close returns this', () => db.close() === db);
  step('close twice', () => db.close() === db);
  step('open after close', () => [db.open, db.inTransaction]);
  step('prepare after close', () => db.prepare('SELECT 1'));
  step('prepare non-string after close', () => db.prepare(1));
  step('exec after close', () => db.exec('SELECT 1'));
  step('pragma after close', () => db.pragma('user_version'));
  step('get after close', () => reader.get());
  step('all after close', () => reader.all());
  step('iterate after close', () => reader.iterate());
  step('run after close', () => writer.run(1));
  step('get on writer after close', () => writer.get());
  step('pluck after close', () => reader.pluck().source);
  step('columns after close', () => reader.columns());
  step('bind after close', () => writer.bind(1));
  step('old transaction after close', () => tx());
  step('new transaction after close', () => db.transaction(() => 1));
});

/**
 * The layout of an object as better-sqlite3 makes it: for the object and each prototype up
 * to Object.prototype, its own keys in order (a symbol only by its description: better-sqlite3's
 * native handle is an implementation's own), each with its attributes and, for a function,
 * its name and length; and whether the object is extensible.
 */
function layout(object) {
  const levels = [];
  for (let o = object; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    const keys = Reflect.ownKeys(o).map((key) => {
      const d = Object.getOwnPropertyDescriptor(o, key);
      const name = typeof key === 'symbol' ? `symbol ${/^(Symbol|nodejs)\./.test(key.description ?? '') ? key.description : '(own)'}` : key;
      const attributes = ['writable', 'enumerable', 'configurable'].filter((a) => d[a]).join(' ');
      if ('get' in d) return [name, 'accessor', attributes, d.get?.name, typeof d.set];
      const { value } = d;
      if (typeof value !== 'function') return [name, typeof value, attributes];
      return [name, 'function', attributes, value.name, value.length];
    });
    levels.push({ extensible: Object.isExtensible(o), keys });
  }
  return levels;
}

test('every member of better-sqlite3 12 is there, own or inherited as there, none refused as unsupported', { skip: referenceSkip }, (t) => {
  const dir = tempDir(t);
  const ours = new Database(join(dir, 'ours.db'));
  const theirs = new BetterSqlite3(join(dir, 'theirs.db'));
  t.after(() => {
    ours.close();
    theirs.close();
  });
  const pairs = [
    ['Database', theirs, ours],
    ['Statement', theirs.prepare('SELECT 1 AS x'), ours.prepare('SELECT 1 AS x')],
    ['a writer Statement', theirs.prepare('CREATE TABLE w (a)'), ours.prepare('CREATE TABLE w (a)')],
    ['iterator', theirs.prepare('SELECT 1 AS x').iterate(), ours.prepare('SELECT 1 AS x').iterate()],
    ['Database class', BetterSqlite3, Database],
  ];
  for (const [what, reference, object] of pairs) {
    assert.deepEqual(layout(object), layout(reference), `${what}: own and inherited members`);
    reference.return?.();
    object.return?.();
  }
  const [theirStatement, ourStatement] = [theirs, ours].map((db) => db.prepare('SELECT 1 AS x'));
  const [theirIterator, ourIterator] = [theirStatement, ourStatement].map((s) => s.iterate());
  assert.deepEqual(layout(ourStatement), layout(theirStatement), 'a Statement while iterated');
  theirIterator.return();
  ourIterator.return();
  // What used to be refused now runs (each as better-sqlite3 runs it).
  ours.function('f', () => 1);
  ours.aggregate('a', { start: 0, step: (total, x) => total + x });
  ours.table('t', { columns: ['x'], *rows() { yield [1]; } });
  assert.deepEqual(ours.prepare('SELECT f() AS f, (SELECT a(x) FROM t) AS a').get(), { f: 1, a: 1 });
  assert.equal(typeof ours.prepare('SELECT 1').safeIntegers().pluck().get(), 'bigint');
  assert.equal(ours.defaultSafeIntegers(false).unsafeMode(false), ours);
});

test('store.db is one stable Database on the store connection; importBetterSqlite3 resolves to Database', async (t) => {
  const store = createStore(join(tempDir(t), 'nested', 'hub.db'));
  t.after(() => store.close());
  assert.equal(store.db, store.db);
  assert.ok(store.db instanceof Database);
  assert.equal(await (await import('../index.mjs')).importBetterSqlite3(), Database);
  assert.equal(Database.SqliteError.name, 'SqliteError');
  assert.equal(store.db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get(), '6');
  store.db.transaction(() => {
    store.registerAgent({ agent_id: 'a1', cli: 'codex', pid: 1 });
    assert.equal(store.db.inTransaction, true);
  })();
  assert.equal(store.db.prepare('SELECT count(*) FROM agents').pluck().get(), 1);
  store.close();
  assert.equal(store.db.open, false);
  assert.throws(() => store.db.prepare('SELECT 1'), { name: 'TypeError', message: 'The database connection is not open' });
});
