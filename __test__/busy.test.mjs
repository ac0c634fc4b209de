// The busy rules, beside better-sqlite3: every call of the API in each state of its
// connection (idle, an iterator open, a user function running, closed), with what each
// call gives (a value, or the error's class and message) compared call by call; then the
// cases where a refused call used to leave the connection unable to close.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Database } from '../index.mjs';
import { BetterSqlite3, differentialTest, referenceSkip, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const CommonJsDatabase = require('../better-sqlite3.cjs');

const differential = (name, script) =>
  differentialTest(name, script, [['ESM', Database], ['CommonJS', CommonJsDatabase]]);

const ROWS = 4;

/**
 * A database with a table of ROWS rows and a function `f` whose body the test sets, and
 * three statements over it: `looped` (read by the loops below, calling `f` per row),
 * `reader` (another reader calling `f`) and `writer`.
 */
function fixture(D, dir, name) {
  const db = new D(join(dir, `${name}.db`));
  db.exec(`CREATE TABLE t (a INTEGER, b TEXT);
    INSERT INTO t VALUES ${Array.from({ length: ROWS }, (_, i) => `(${i + 1}, 'r${i + 1}')`).join(', ')}`);
  let body = () => {};
  db.function('f', (x) => (body(), x));
  return {
    db,
    onCall: (fn) => {
      body = fn;
    },
    looped: db.prepare('SELECT f(a) AS a FROM t ORDER BY a'),
    reader: db.prepare('SELECT f(a) AS a FROM t ORDER BY a'),
    writer: db.prepare("UPDATE t SET b = b || '.'"),
  };
}

/** The states a call is tried in; each runs `call` and records every outcome in `seen`. */
const STATES = {
  idle: (fx, call) => call(),
  iterating: (fx, call) => {
    for (const _ of fx.looped.iterate()) call();
  },
  'in a callback': (fx, call) => {
    fx.onCall(call);
    fx.looped.all();
    fx.onCall(() => {});
  },
  closed: (fx, call) => {
    fx.db.close();
    call();
  },
};

/** Every call of the API worth a state: name → call(fixture, counter). */
const CALLS = {
  'db.prepare (read)': ({ db }) => db.prepare('SELECT 5').source,
  'db.prepare (write)': ({ db }) => db.prepare('DELETE FROM t WHERE 0').reader,
  'db.exec (read)': ({ db }) => db.exec('SELECT 5') === db,
  'db.exec (write)': ({ db }) => db.exec("UPDATE t SET b = b || '!'") === db,
  'db.pragma': ({ db }) => db.pragma('cache_size'),
  'db.pragma (checkpoint)': ({ db }) => db.pragma('wal_checkpoint(RESTART)'),
  'db.pragma (simple)': ({ db }) => db.pragma('user_version', { simple: true }),
  'db.function': ({ db }, n) => db.function(`g${n}`, () => 1) === db,
  'db.aggregate': ({ db }, n) => db.aggregate(`h${n}`, { step: () => {} }) === db,
  'db.table': ({ db }, n) => db.table(`v${n}`, { columns: ['x'], *rows() {} }) === db,
  'db.loadExtension': ({ db }) => db.loadExtension('./no-such-extension'),
  'db.serialize': ({ db }) => db.serialize().length > 0,
  'db.defaultSafeIntegers': ({ db }, n) => db.defaultSafeIntegers(n % 2 === 0) === db,
  'db.unsafeMode': ({ db }, n) => db.unsafeMode(n % 2 === 1) === db,
  'db.open, db.inTransaction': ({ db }) => [db.open, db.inTransaction],
  'db.transaction': ({ db }) => db.transaction(() => 7)(),
  'db.close': ({ db }) => db.close() === db,
  'writer.run': ({ writer }) => writer.run().changes,
  'reader.get': ({ reader }) => reader.get(),
  'reader.all': ({ reader }) => reader.all().length,
  'reader.iterate': ({ reader }) => [...reader.iterate()].length,
  'reader.bind': ({ reader }) => reader.bind() === reader,
  'reader.pluck, raw, expand, safeIntegers': ({ reader }) => [reader.pluck(), reader.raw(), reader.expand(false), reader.safeIntegers(false)].every((s) => s === reader),
  'reader.columns': ({ reader }) => reader.columns().length,
  'reader.busy': ({ reader }) => reader.busy,
  'looped.get (itself)': ({ looped }) => looped.get(),
  'looped.all (itself)': ({ looped }) => looped.all().length,
  'looped.iterate (itself)': ({ looped }) => [...looped.iterate()].length,
  'looped.bind (itself)': ({ looped }) => looped.bind() === looped,
  'looped.pluck (itself)': ({ looped }) => looped.pluck() === looped,
  'looped.safeIntegers (itself)': ({ looped }) => looped.safeIntegers() === looped,
  'looped.columns (itself)': ({ looped }) => looped.columns().length,
  'looped.busy (itself)': ({ looped }) => looped.busy,
};

for (const [name, call] of Object.entries(CALLS)) {
  differential(`busy rules: ${name}, in every state of the connection`, (D, dir, step) => {
    for (const [state, within] of Object.entries(STATES)) {
      const fx = fixture(D, dir, state.replace(/ /g, '-'));
      let n = 0;
      // A refused call must leave the connection as it was: the loop finishes its rows.
      step(`${state}: the state itself`, () => within(fx, () => step(`${state}: call ${++n}`, () => call(fx, n))));
      step(`${state}: afterwards`, () => call(fx, 100));
      step(`${state}: closes`, () => [fx.db.close() === fx.db, fx.db.open]);
    }
  });
}

/** An iterator over `reader`, opened before the state, and what its next() and return() give there. */
differential('an open iterator: next() and return() in every state of the connection', (D, dir, step) => {
  for (const method of ['next', 'return']) {
    for (const [state, within] of Object.entries(STATES)) {
      const fx = fixture(D, dir, `${method}-${state.replace(/ /g, '-')}`);
      const iterator = fx.reader.iterate();
      if (state === 'closed') iterator.return();
      let n = 0;
      step(`${method} ${state}`, () => within(fx, () => step(`${method} ${state}: call ${++n}`, () => iterator[method]())));
      step(`${method} ${state}: next afterwards`, () => iterator.next());
      step(`${method} ${state}: busy afterwards`, () => fx.reader.busy);
      step(`${method} ${state}: return afterwards`, () => iterator.return());
      step(`${method} ${state}: closes`, () => [fx.db.close() === fx.db, fx.db.open]);
    }
  }
});

differential('a finished iterator: next() and return() inside a callback are refused, elsewhere done', (D, dir, step) => {
  const fx = fixture(D, dir, 'finished');
  const finished = fx.reader.iterate();
  step('run out', () => [...finished].length);
  const returned = fx.reader.iterate();
  step('returned', () => returned.return());
  for (const [label, iterator] of [['finished', finished], ['returned', returned]]) {
    fx.onCall(() => {
      step(`${label}: next in a callback`, () => iterator.next());
      step(`${label}: return in a callback`, () => iterator.return());
    });
    step(`${label}: the callback ran`, () => fx.looped.get());
    fx.onCall(() => {});
    step(`${label}: next outside`, () => iterator.next());
    step(`${label}: return outside`, () => iterator.return());
  }
  step('closes', () => fx.db.close().open);
  step('next after close', () => finished.next());
});

differential('unsafe mode switched inside a callback takes effect', (D, dir, step) => {
  const fx = fixture(D, dir, 'unsafe');
  fx.onCall(() => step('unsafeMode in a callback', () => fx.db.unsafeMode() === fx.db));
  step('get', () => fx.reader.get());
  fx.onCall(() => {});
  const iterator = fx.looped.iterate();
  step('first row', () => iterator.next());
  step('write while iterating, unsafe', () => fx.writer.run().changes);
  fx.onCall(() => step('safe again in a callback', () => fx.db.unsafeMode(false) === fx.db));
  step('second row', () => iterator.next());
  step('write while iterating, safe', () => fx.writer.run());
  step('return', () => iterator.return());
});

differential('which refusal comes first: the connection busy, then the statement', (D, dir, step) => {
  const fx = fixture(D, dir, 'order');
  const iterator = fx.looped.iterate();
  fx.onCall(() => {
    step('own get inside its own step', () => fx.looped.get());
    step('own run inside its own step', () => fx.db.prepare('SELECT 1').run());
  });
  step('first row', () => iterator.next());
  fx.onCall(() => {});
  step('own get between rows', () => fx.looped.get());
  step('own bind between rows', () => fx.looped.bind());
  step('own pluck(1) between rows', () => fx.looped.pluck(1));
  step('unsafe', () => fx.db.unsafeMode(true) === fx.db);
  const ownWriter = fx.db.prepare('UPDATE t SET a = a WHERE 0 RETURNING a');
  const ownIterator = ownWriter.iterate();
  step('a writer iterated, run', () => ownWriter.run());
  step('a writer iterated, other writes allowed in unsafe mode', () => fx.writer.run().changes);
  step('returns', () => [iterator.return(), ownIterator.return()]);
});

test('busy rules: db.backup() in every state of the connection, beside better-sqlite3', { skip: referenceSkip }, async (t) => {
  const record = async (D, label) => {
    const seen = [];
    for (const [state, within] of Object.entries(STATES)) {
      const dir = join(tempDir(t), `${label}-${state.replace(/ /g, '-')}`);
      mkdirSync(dir);
      const fx = fixture(D, dir, 'backup');
      const promises = [];
      let n = 0;
      within(fx, () => promises.push(fx.db.backup(join(dir, `copy${++n}.db`))));
      for (const p of promises) seen.push([state, await p.then((r) => ['resolved', r], (e) => ['rejected', e.constructor.name, e.message])]);
      if (fx.db.open) fx.db.close();
    }
    return seen;
  };
  const reference = await record(BetterSqlite3, 'reference');
  assert.equal(reference.length, 2 + 2 * ROWS);
  for (const [label, D] of [['ESM', Database], ['CommonJS', CommonJsDatabase]]) {
    assert.deepEqual(await record(D, label), reference, label);
  }
});

test('an iterator whose next() is refused inside a callback stays open, and the connection closes', (t) => {
  const db = new Database(join(tempDir(t), 'wedge.db'));
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2), (3)');
  let iterator;
  const refused = [];
  db.function('f', (x) => {
    try {
      iterator.next();
      refused.push(false);
    } catch (e) {
      refused.push(e instanceof TypeError && e.message === 'This database connection is busy executing a query');
    }
    return x;
  });
  iterator = db.prepare('SELECT a FROM t ORDER BY a').iterate();
  assert.deepEqual(db.prepare('SELECT f(a) FROM t').pluck().all(), [1, 2, 3]);
  assert.deepEqual(refused, [true, true, true], 'refused on every row, not only the first');
  assert.equal(iterator.statement.busy, true);
  assert.deepEqual([...iterator].map((r) => r.a), [1, 2, 3], 'the iterator still has every row');
  assert.equal(iterator.statement.busy, false);
  db.close();
  assert.equal(db.open, false);
});

differential('a named parameter getter uses the connection as better-sqlite3 lets it: before the statement is busy', (D, dir, step) => {
  const db = new D(join(dir, 'getter.db'));
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2), (3)');
  const iterator = db.prepare('SELECT a FROM t ORDER BY a').iterate();
  const params = {
    get x() {
      step('next in the getter', () => iterator.next());
      step('a read in the getter', () => db.prepare('SELECT 7').pluck().get());
      return 1;
    },
  };
  step('get with the object', () => db.prepare('SELECT :x AS x').pluck().get(params));
  step('the iterator goes on', () => [...iterator].map((r) => r.a));
  step('closes', () => db.close().open);
});

test('a getter of named parameters bound natively (a proxy) is refused while the statement binds, and the iterator stays open', (t) => {
  const db = new Database(join(tempDir(t), 'getter.db'));
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)');
  const iterator = db.prepare('SELECT a FROM t ORDER BY a').iterate();
  const params = new Proxy({ x: 1 }, {
    get(target, key) {
      // Refused here (a documented difference: better-sqlite3 binds before it is busy).
      assert.throws(() => iterator.next(), { name: 'TypeError', message: 'This database connection is busy executing a query' });
      return target[key];
    },
  });
  assert.equal(db.prepare('SELECT :x AS x').pluck().get(params), 1);
  assert.deepEqual([...iterator].map((r) => r.a), [1, 2]);
  db.close();
  assert.equal(db.open, false);
});

test('an iterator that fails while stepping is over, and so is its statement busy', (t) => {
  const db = new Database(join(tempDir(t), 'fails.db'));
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)');
  db.function('boom', (a) => {
    if (a === 2) throw new RangeError('boom');
    return a;
  });
  const stmt = db.prepare('SELECT boom(a) AS a FROM t');
  const iterator = stmt.iterate();
  assert.deepEqual(iterator.next(), { value: { a: 1 }, done: false });
  assert.throws(() => iterator.next(), { name: 'RangeError', message: 'boom' });
  assert.equal(stmt.busy, false);
  assert.deepEqual(iterator.next(), { value: undefined, done: true });
  db.close();
  assert.equal(db.open, false);
});

test('an iterator dropped while open stops holding the connection once collected', async (t) => {
  // A child process with gc() exposed: collection is what is tested.
  const script = `
    const Database = require(${JSON.stringify(require.resolve('../better-sqlite3.cjs'))});
    const db = new Database(process.argv[1]);
    db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)');
    (() => { db.prepare('SELECT a FROM t').iterate().next(); })();
    const before = (() => { try { db.exec('DELETE FROM t'); return 'allowed'; } catch (e) { return e.message; } })();
    globalThis.gc();
    setTimeout(() => {
      globalThis.gc();
      setTimeout(() => {
        db.exec('DELETE FROM t');
        db.close();
        console.log(JSON.stringify([before, db.open]));
      }, 10);
    }, 10);`;
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script, join(tempDir(t), 'gc.db')], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), ['This database connection is busy executing a query', false]);
});
