// better-sqlite3 12's API, case by case, with the expected values written here: a suite
// that needs no better-sqlite3 to run, so it runs where better-sqlite3 cannot (Bun, Deno;
// tools/runtimes/lane.mjs). Each case gets a Database class and a fresh folder.
// __test__/runtimes.test.mjs runs the same cases on Node against better-sqlite3 itself,
// which proves every value written here is better-sqlite3's.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Asserts that fn throws an error of class `type` with this name, code and message. */
function throwsLike(fn, type, { name = type.name, code, message }) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof type, `expected a ${type.name}, got ${error?.constructor?.name}: ${error?.message}`);
  assert.equal(error.name, name);
  assert.equal(error.message, message);
  if (code !== undefined) assert.equal(error.code, code);
}

/** Own keys and prototype of a row, so key order and the plain-object shape are checked. */
function plainRow(row) {
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
  return Object.entries(row);
}

const people = (D) => {
  const db = new D(':memory:');
  db.exec(`CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, age INTEGER, score REAL, photo BLOB);
    INSERT INTO people (name, age, score, photo) VALUES ('ada', 36, 9.5, x'0102'), ('bob', 41, NULL, NULL), ('cy', NULL, 7.25, x'');`);
  return db;
};

export const apiCases = [
  {
    name: 'an in-memory database: its properties, close, and what a closed one refuses',
    run(D) {
      const db = new D(':memory:');
      assert.deepEqual([db.name, db.memory, db.readonly, db.open, db.inTransaction], [':memory:', true, false, true, false]);
      assert.equal(db.close(), db);
      assert.equal(db.open, false);
      throwsLike(() => db.prepare('SELECT 1'), TypeError, { message: 'The database connection is not open' });
    },
  },
  {
    name: 'a file database, fileMustExist and readonly',
    run(D, dir) {
      const file = join(dir, 'a.db');
      throwsLike(() => new D(file, { fileMustExist: true }), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_CANTOPEN', message: 'unable to open database file' });
      const db = new D(file);
      assert.deepEqual([db.name, db.memory, db.readonly], [file, false, false]);
      db.exec('CREATE TABLE t (x)');
      db.close();
      assert.ok(existsSync(file));
      const ro = new D(file, { readonly: true, fileMustExist: true });
      assert.equal(ro.readonly, true);
      throwsLike(() => ro.exec('INSERT INTO t VALUES (1)'), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_READONLY', message: 'attempt to write a readonly database' });
      ro.close();
    },
  },
  {
    name: 'run, get, all and iterate: their results, row shapes and key order',
    run(D) {
      const db = people(D);
      assert.deepEqual(db.prepare('INSERT INTO people (name, age) VALUES (?, ?)').run('dee', 29), { changes: 1, lastInsertRowid: 4 });
      assert.deepEqual(db.prepare('UPDATE people SET age = age + 1 WHERE age > ?').run(30), { changes: 2, lastInsertRowid: 4 });
      const select = db.prepare('SELECT name, age, score, id FROM people WHERE id = ?');
      assert.deepEqual(plainRow(select.get(1)), [['name', 'ada'], ['age', 37], ['score', 9.5], ['id', 1]]);
      assert.equal(select.get(99), undefined);
      const all = db.prepare('SELECT id, name FROM people ORDER BY id').all();
      assert.deepEqual(all, [{ id: 1, name: 'ada' }, { id: 2, name: 'bob' }, { id: 3, name: 'cy' }, { id: 4, name: 'dee' }]);
      assert.deepEqual([...db.prepare('SELECT name FROM people WHERE age IS NULL').iterate()], [{ name: 'cy' }]);
      const iterator = db.prepare('SELECT id FROM people ORDER BY id').iterate();
      assert.deepEqual(iterator.next(), { value: { id: 1 }, done: false });
      assert.deepEqual(iterator.return(), { value: undefined, done: true });
      assert.deepEqual(iterator.next(), { value: undefined, done: true });
      assert.deepEqual(db.prepare('SELECT * FROM people WHERE 0').all(), []);
    },
  },
  {
    name: 'values of every type, in and out: numbers, text, BLOBs as Buffers, NULL',
    run(D) {
      const db = new D(':memory:');
      const row = db.prepare('SELECT ? AS i, ? AS r, ? AS s, ? AS b, ? AS n, ? AS big').get(42, 1.5, 'héllo ✓ 😀', Buffer.from([0, 255]), null, 12n);
      assert.deepEqual(Object.keys(row), ['i', 'r', 's', 'b', 'n', 'big']);
      assert.deepEqual([row.i, row.r, row.s, row.n, row.big], [42, 1.5, 'héllo ✓ 😀', null, 12]);
      // A number binds as REAL, a BigInt as INTEGER.
      assert.deepEqual(db.prepare('SELECT typeof(?), typeof(?)').raw().get(3, 3n), ['real', 'integer']);
      assert.ok(Buffer.isBuffer(row.b));
      assert.equal(row.b.toString('hex'), '00ff');
      assert.equal(db.prepare("SELECT x''").pluck().get().length, 0);
      assert.equal(db.prepare('SELECT 9007199254740993').pluck().get(), 9007199254740992);
      assert.equal(db.prepare('SELECT typeof(?)').pluck().get(2 ** 53 + 2), 'real');
      throwsLike(() => db.prepare('SELECT ?').get(true), TypeError, { message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null' });
      throwsLike(() => db.prepare('SELECT ?').get(new Date(0)), TypeError, { message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null' });
      throwsLike(() => db.prepare('SELECT ?').get(2n ** 63n), RangeError, { message: 'The bound string, buffer, or bigint is too big' });
    },
  },
  {
    name: 'parameters: positional, arrays, named with @ : $, and their errors',
    run(D) {
      const db = new D(':memory:');
      assert.deepEqual(db.prepare('SELECT ? AS a, ? AS b').get([1, 2]), { a: 1, b: 2 });
      assert.deepEqual(db.prepare('SELECT ? AS a, ? + 1 AS b').raw().get(5, 6), [5, 7]);
      assert.deepEqual(db.prepare('SELECT @x AS x, :y AS y, $z AS z').get({ x: 1, y: 'two', z: null }), { x: 1, y: 'two', z: null });
      assert.deepEqual(db.prepare('SELECT ? AS a, @x AS x').get(7, { x: 8 }), { a: 7, x: 8 });
      throwsLike(() => db.prepare('SELECT @x, @y').get({ x: 1 }), RangeError, { message: 'Missing named parameter "y"' });
      throwsLike(() => db.prepare('SELECT ?').get(1, 2), RangeError, { message: 'Too many parameter values were provided' });
      throwsLike(() => db.prepare('SELECT ?, ?').get(1), RangeError, { message: 'Too few parameter values were provided' });
      throwsLike(() => db.prepare('SELECT @x').get(1), RangeError, { message: 'Too many parameter values were provided' });
      const bound = db.prepare('SELECT ? AS v').bind(3);
      assert.deepEqual(bound.get(), { v: 3 });
      throwsLike(() => bound.get(4), TypeError, { message: 'This statement already has bound parameters' });
      throwsLike(() => bound.bind(4), TypeError, { message: 'The bind() method can only be invoked once per statement object' });
    },
  },
  {
    name: 'row modes: pluck, raw, expand, and columns()',
    run(D) {
      const db = people(D);
      const select = db.prepare('SELECT p.id, p.name, p.age + 1 AS next FROM people p WHERE p.id <= 2 ORDER BY p.id');
      assert.deepEqual(select.pluck().all(), [1, 2]);
      assert.deepEqual(select.raw().all(), [[1, 'ada', 37], [2, 'bob', 42]]);
      assert.deepEqual(select.expand().get(), { people: { id: 1, name: 'ada' }, $: { next: 37 } });
      assert.deepEqual(select.expand(false).get(), { id: 1, name: 'ada', next: 37 });
      assert.deepEqual(select.columns(), [
        { name: 'id', column: 'id', table: 'people', database: 'main', type: 'INTEGER' },
        { name: 'name', column: 'name', table: 'people', database: 'main', type: 'TEXT' },
        { name: 'next', column: null, table: null, database: null, type: null },
      ]);
      throwsLike(() => db.prepare('DELETE FROM people').pluck(), TypeError, { message: 'The pluck() method is only for statements that return data' });
      throwsLike(() => db.prepare('DELETE FROM people').get(), TypeError, { message: 'This statement does not return data. Use run() instead' });
    },
  },
  {
    name: 'a statement: reader, readonly, source, database',
    run(D) {
      const db = people(D);
      const select = db.prepare('SELECT 1');
      const insert = db.prepare("INSERT INTO people (name) VALUES ('z')");
      assert.deepEqual([select.reader, select.readonly, select.source, select.database === db], [true, true, 'SELECT 1', true]);
      assert.deepEqual([insert.reader, insert.readonly], [false, false]);
      assert.deepEqual([db.prepare("INSERT INTO people (name) VALUES ('y') RETURNING id").reader], [true]);
      throwsLike(() => db.prepare('SELECT 1; SELECT 2'), RangeError, { message: 'The supplied SQL string contains more than one statement' });
      throwsLike(() => db.prepare(''), RangeError, { message: 'The supplied SQL string contains no statements' });
    },
  },
  {
    name: 'safe integers: BigInt results, lastInsertRowid and the database default',
    run(D) {
      const db = new D(':memory:');
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, r REAL)');
      const big = 2n ** 62n + 1n;
      db.prepare('INSERT INTO t (id, n, r) VALUES (?, ?, ?)').run(1, big, 0.5);
      const select = db.prepare('SELECT n, r FROM t').safeIntegers();
      assert.deepEqual(select.get(), { n: big, r: 0.5 });
      assert.deepEqual(select.safeIntegers(false).get(), { n: 4611686018427388000, r: 0.5 });
      assert.deepEqual(db.prepare('INSERT INTO t (n) VALUES (1)').safeIntegers().run(), { changes: 1, lastInsertRowid: 2n });
      assert.equal(db.defaultSafeIntegers(), db);
      assert.deepEqual(db.prepare('SELECT id FROM t ORDER BY id').pluck().all(), [1n, 2n]);
      db.defaultSafeIntegers(false);
      assert.deepEqual(db.prepare('SELECT id FROM t ORDER BY id').pluck().all(), [1, 2]);
    },
  },
  {
    name: 'transactions: commit, rollback on a throw, nesting, the three kinds',
    run(D) {
      const db = new D(':memory:');
      db.exec('CREATE TABLE t (x INTEGER UNIQUE)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      const insertMany = db.transaction((xs) => {
        for (const x of xs) insert.run(x);
        return db.inTransaction;
      });
      assert.equal(insertMany([1, 2, 3]), true);
      assert.equal(db.inTransaction, false);
      throwsLike(() => insertMany([4, 1]), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed: t.x' });
      const count = db.prepare('SELECT count(*) FROM t').pluck();
      assert.equal(count.get(), 3);
      const outer = db.transaction(() => {
        insert.run(10);
        try {
          db.transaction(() => {
            insert.run(11);
            throw new Error('inner fails');
          })();
        } catch (error) {
          assert.equal(error.message, 'inner fails');
        }
        insert.run(12);
      });
      outer();
      assert.deepEqual(db.prepare('SELECT x FROM t WHERE x >= 10 ORDER BY x').pluck().all(), [10, 12]);
      for (const [i, kind] of ['deferred', 'immediate', 'exclusive'].entries()) {
        assert.equal(insertMany[kind]([20 + i]), true);
      }
      assert.equal(count.get(), 8);
      throwsLike(() => db.transaction(5), TypeError, { message: 'Expected first argument to be a function' });
    },
  },
  {
    name: 'pragma, simple and not',
    run(D) {
      const db = new D(':memory:');
      db.pragma('user_version = 7');
      assert.equal(db.pragma('user_version', { simple: true }), 7);
      assert.deepEqual(db.pragma('user_version'), [{ user_version: 7 }]);
      db.exec('CREATE TABLE t (a INTEGER NOT NULL, b TEXT)');
      assert.deepEqual(db.pragma('table_info(t)').map((c) => [c.name, c.type, c.notnull]), [['a', 'INTEGER', 1], ['b', 'TEXT', 0]]);
      throwsLike(() => db.pragma('user_version', { simple: 1 }), TypeError, { message: 'Expected the "simple" option to be a boolean' });
    },
  },
  {
    name: 'user functions: scalar, varargs, deterministic, and a throwing one',
    run(D) {
      const db = new D(':memory:');
      assert.equal(db.function('add2', (a, b) => a + b), db);
      db.function('joinAll', { varargs: true, deterministic: true }, (...xs) => xs.join('|'));
      db.function('fails', () => {
        throw new RangeError('from the function');
      });
      assert.equal(db.prepare('SELECT add2(40, 2)').pluck().get(), 42);
      assert.equal(db.prepare("SELECT joinAll(1, 'b', NULL, 2.5)").pluck().get(), '1|b||2.5');
      throwsLike(() => db.prepare('SELECT fails()').get(), RangeError, { message: 'from the function' });
      throwsLike(() => db.prepare('SELECT add2(1)').get(), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_ERROR', message: 'wrong number of arguments to function add2()' });
    },
  },
  {
    name: 'user aggregates, and a window function',
    run(D) {
      const db = new D(':memory:');
      db.exec('CREATE TABLE t (g TEXT, x INTEGER); INSERT INTO t VALUES (\'a\', 1), (\'a\', 2), (\'b\', 3), (\'b\', 4), (\'b\', 5);');
      db.aggregate('total', { start: 0, step: (sum, x) => sum + x, result: (sum) => sum * 10 });
      assert.deepEqual(db.prepare('SELECT g, total(x) AS t FROM t GROUP BY g ORDER BY g').raw().all(), [['a', 30], ['b', 120]]);
      db.aggregate('moving', { start: 0, step: (sum, x) => sum + x, inverse: (sum, x) => sum - x });
      const moving = db.prepare('SELECT moving(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t').pluck().all();
      assert.deepEqual(moving, [1, 3, 5, 7, 9]);
    },
  },
  {
    name: 'a virtual table from a generator',
    run(D) {
      const db = new D(':memory:');
      db.table('countdown', {
        columns: ['n', 'label'],
        parameters: ['start'],
        *rows(start) {
          for (let n = start; n > 0; n--) yield { n, label: `#${n}` };
        },
      });
      assert.deepEqual(db.prepare('SELECT n, label FROM countdown(3)').raw().all(), [[3, '#3'], [2, '#2'], [1, '#1']]);
      assert.equal(db.prepare('SELECT sum(n) FROM countdown(100)').pluck().get(), 5050);
    },
  },
  {
    name: 'serialize() and a Database from its bytes',
    run(D) {
      const db = people(D);
      const bytes = db.serialize();
      assert.ok(Buffer.isBuffer(bytes));
      assert.equal(bytes.subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
      const copy = new D(bytes);
      assert.deepEqual([copy.name, copy.memory], [':memory:', true]);
      assert.deepEqual(copy.prepare('SELECT name FROM people ORDER BY id').pluck().all(), ['ada', 'bob', 'cy']);
      copy.close();
    },
  },
  {
    name: 'backup() to a file, and the copy read back',
    async run(D, dir) {
      const db = people(D);
      const file = join(dir, 'copy.db');
      const result = await db.backup(file);
      assert.equal(result.remainingPages, 0);
      assert.ok(result.totalPages > 0);
      const copy = new D(file, { readonly: true });
      assert.deepEqual(copy.prepare('SELECT name, age FROM people ORDER BY id').raw().all(), [['ada', 36], ['bob', 41], ['cy', null]]);
      copy.close();
      await assert.rejects(db.backup(':memory:'), { name: 'TypeError', message: 'Invalid backup filename ":memory:"' });
    },
  },
  {
    name: 'SqliteError: class, code, message, and SQLite errors from prepare and run',
    run(D) {
      const db = people(D);
      throwsLike(() => db.prepare('SELEC 1'), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_ERROR', message: 'near "SELEC": syntax error' });
      throwsLike(() => db.prepare('SELECT * FROM nowhere'), D.SqliteError, { name: 'SqliteError', code: 'SQLITE_ERROR', message: 'no such table: nowhere' });
      throwsLike(() => db.prepare('INSERT INTO people (name) VALUES (NULL)').run(), D.SqliteError, {
        name: 'SqliteError',
        code: 'SQLITE_CONSTRAINT_NOTNULL',
        message: 'NOT NULL constraint failed: people.name',
      });
      const made = new D.SqliteError('made here', 'SQLITE_MADE');
      assert.ok(made instanceof Error);
      assert.deepEqual([made.name, made.code, made.message, Object.keys(made)], ['SqliteError', 'SQLITE_MADE', 'made here', ['code']]);
    },
  },
  {
    name: 'the verbose option logs each statement with its values',
    run(D) {
      const seen = [];
      const db = new D(':memory:', { verbose: (sql) => seen.push(sql) });
      db.exec('CREATE TABLE t (x)');
      db.prepare('INSERT INTO t VALUES (?)').run("it's");
      db.prepare('SELECT x FROM t WHERE x = ?').get(5);
      // A number is bound as REAL, so the expanded SQL writes 5.0.
      assert.deepEqual(seen, ['CREATE TABLE t (x)', "INSERT INTO t VALUES ('it''s')", 'SELECT x FROM t WHERE x = 5.0']);
    },
  },
  {
    name: 'an open iterator keeps the connection busy unless unsafe mode is on',
    run(D) {
      const db = people(D);
      const iterator = db.prepare('SELECT id FROM people').iterate();
      iterator.next();
      throwsLike(() => db.exec('DELETE FROM people WHERE id = 3'), TypeError, { message: 'This database connection is busy executing a query' });
      assert.equal(db.unsafeMode(), db);
      db.exec('UPDATE people SET age = 0 WHERE id = 3');
      iterator.return();
      db.unsafeMode(false);
      assert.equal(db.prepare('SELECT age FROM people WHERE id = 3').pluck().get(), 0);
    },
  },
  {
    name: 'Database without new, and the checks of its arguments',
    run(D) {
      const db = D(':memory:');
      assert.equal(db.prepare('SELECT 5').pluck().get(), 5);
      db.close();
      throwsLike(() => new D(5), TypeError, { message: 'Expected first argument to be a string' });
      throwsLike(() => new D(':memory:', { readonly: true }), TypeError, { message: 'In-memory/temporary databases cannot be readonly' });
      throwsLike(() => new D(':memory:', { timeout: -1 }), TypeError, { message: 'Expected the "timeout" option to be a positive integer' });
    },
  },
];
