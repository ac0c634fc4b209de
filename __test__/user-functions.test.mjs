// db.function(), db.aggregate() and db.table() against better-sqlite3 on the running Node:
// every scenario runs on both, and the results (values, or the error's class, code and
// message, and whether the thrown value is the callback's own) must be the same. The
// package is loaded both ways a user would: ESM import and CommonJS require.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import test from 'node:test';

import EsmDatabase from 'triflux-native-store/better-sqlite3';
import { createStore } from '../index.mjs';
import { BetterSqlite3, referenceSkip, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const CjsDatabase = require('triflux-native-store/better-sqlite3');

/** What a call gives: its value, or what it threw (`own` when it is `marker`). */
function outcome(fn, marker) {
  try {
    return { value: fn() };
  } catch (error) {
    if (marker !== undefined && error === marker) return { threw: 'own' };
    if (!(error instanceof Error)) return { threw: typeof error, value: String(error) };
    return { threw: error.constructor.name, code: error.code, message: error.message };
  }
}

/** Runs `scenario(db, check)` on a fresh database of each kind and compares what it recorded. */
function differential(name, scenario, Databases = [EsmDatabase, CjsDatabase]) {
  test(name, { skip: referenceSkip }, (t) => {
    const record = (Database) => {
      const db = new Database(join(tempDir(t), 'u.db'));
      const seen = [];
      try {
        scenario(db, (label, fn, marker) => seen.push([label, outcome(fn, marker)]));
      } finally {
        if (db.open && !db.inTransaction) db.close();
      }
      return seen;
    };
    const expected = record(BetterSqlite3);
    assert.ok(expected.length > 0, 'the scenario checked something');
    for (const Database of Databases) assert.deepEqual(record(Database), expected);
  });
}

const table = (db) => {
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x, label TEXT)');
  const insert = db.prepare('INSERT INTO t (x, label) VALUES (?, ?)');
  for (const [x, label] of [[1, 'a'], [2, 'b'], [3, 'a'], [4, 'b'], [5, 'a']]) insert.run(x, label);
};

differential('function: arguments by fn.length, varargs, deterministic, re-registering', (db, check) => {
  db.function('add2', (a, b) => a + b);
  check('numbers', () => db.prepare('SELECT add2(?, ?)').pluck().get(12, 4));
  check('strings', () => db.prepare('SELECT add2(?, ?)').pluck().get('foo', 'bar'));
  check('wrong count', () => db.prepare('SELECT add2(?, ?, ?)').pluck().get(12, 4, 18));
  db.function('add2', (a, b, c) => a + b + c);
  check('second arity', () => db.prepare('SELECT add2(1, 2), add2(1, 2, 3)').raw().get());
  db.function('add2', (a, b) => a * b);
  check('replaced', () => db.prepare('SELECT add2(3, 4)').pluck().get());
  db.function('void', { deterministic: true, varargs: true }, () => {});
  check('varargs', () => db.prepare('SELECT void(), void(?, ?)').raw().get(55, 19));
  db.function('count_args', { varargs: true }, (...args) => args.length);
  check('varargs count', () => db.prepare('SELECT count_args(1, 2, 3, 4, 5)').pluck().get());
  db.function('nothing', () => 7);
  check('no arguments', () => db.prepare('SELECT nothing(), typeof(nothing())').raw().get());
  check('options null', () => db.function('n2', null, () => 1).prepare('SELECT n2()').pluck().get());
});

differential('function: argument and result conversions, safeIntegers', (db, check) => {
  db.function('echo', (x) => x);
  db.function('kind', (x) => (Buffer.isBuffer(x) ? 'buffer' : typeof x));
  const values = [1, 1.5, -0, 2 ** 53 + 2, 'text ü 😀', '', Buffer.from([1, 2, 3]), Buffer.alloc(0), null];
  for (const v of values) {
    check(`kind ${String(v)}`, () => db.prepare('SELECT kind(?)').pluck().get(v));
    check(`echo ${String(v)}`, () => db.prepare('SELECT echo(?) AS v, typeof(echo(?)) AS t').get(v, v));
  }
  check('integer column', () => db.prepare('SELECT kind(9007199254740993), echo(9007199254740993)').raw().get());
  db.function('big', { safeIntegers: true }, (x) => (typeof x === 'bigint' ? x * 2n : typeof x));
  check('safeIntegers in', () => db.prepare('SELECT typeof(big(4611686018427387903)), big(?), big(1.5)').raw().get(21n));
  db.function('notBig', { safeIntegers: false }, (x) => typeof x);
  check('safeIntegers false', () => db.prepare('SELECT notBig(9223372036854775807)').pluck().get());
  const results = {
    number: () => 42,
    bigint: () => 12n,
    string: () => 'str',
    buffer: () => Buffer.from('ab'),
    uint8: () => new Uint8Array([7, 8]),
    float32: () => new Float32Array([1]),
    dataview: () => new DataView(new ArrayBuffer(3)),
    null: () => null,
    undefined: () => undefined,
    tooBig: () => 2n ** 63n,
    negativeTooBig: () => -(2n ** 64n),
    object: () => ({}),
    array: () => [1],
    boolean: () => true,
    symbol: () => Symbol('s'),
    date: () => new Date(0),
  };
  for (const [name, fn] of Object.entries(results)) {
    db.function(`r_${name}`, fn);
    check(`result ${name}`, () => db.prepare(`SELECT r_${name}() AS v, typeof(r_${name}()) AS t`).get());
  }
});

// A TEXT result long enough to be handed to SQLite as it was written (not copied) must read
// back byte for byte wherever SQLite takes it: read out, measured, compared, hexed, stored,
// sorted and grouped, from each kind of callback.
differential('TEXT results of every length and kind: functions, aggregates, windows, tables', (db, check) => {
  const texts = {
    empty: '',
    short: 'a'.repeat(20),
    'first long': 'b'.repeat(21),
    'inline edge': 'c'.repeat(63),
    'past inline': 'd'.repeat(65),
    'accented 40': '\u00e9'.repeat(40),
    'cjk 30': '\u6f22'.repeat(30),
    'emoji 30': '\u{1F600}'.repeat(30),
    'NUL inside': `${'e'.repeat(30)}\0${'f'.repeat(30)}`,
    'lone surrogates': `${'g'.repeat(30)}\ud800${'h'.repeat(5)}\udc00`,
    'short lone surrogate': 'i\ud800',
    'ASCII, large slack': 'j'.repeat(200_000),
    'largest measured by units': 'k'.repeat(349_525),
    'measured exactly': '\u00e9'.repeat(349_526),
  };
  const names = Object.keys(texts);
  db.function('text_of', (i) => texts[names[i]]);
  db.exec('CREATE TABLE kept (i INTEGER, v TEXT)');
  names.forEach((name, i) => {
    const one = (sql) => db.prepare(sql).raw().get(i);
    check(`${name}: read`, () => db.prepare('SELECT text_of(?)').pluck().get(i) === texts[name]);
    check(`${name}: in SQL`, () =>
      one('SELECT length(text_of(?1)), octet_length(text_of(?1)), text_of(?1) = text_of(?1), typeof(text_of(?1))'));
    check(`${name}: bytes`, () => {
      const [hex] = one('SELECT hex(text_of(?))');
      return hex.length < 400 ? hex : `${hex.length}:${hex.slice(0, 80)}:${hex.slice(-80)}`;
    });
    check(`${name}: stored`, () => {
      db.prepare('INSERT INTO kept VALUES (?1, text_of(?1))').run(i);
      return db.prepare('SELECT v FROM kept WHERE i = ?').pluck().get(i) === texts[name];
    });
  });
  check('sorted and grouped', () =>
    db.prepare('SELECT length(v), count(*) FROM (SELECT text_of(value) AS v FROM json_each(?)) GROUP BY v ORDER BY v')
      .raw().all(JSON.stringify([...names.keys(), ...names.keys()])));
  db.aggregate('joined', {
    start: () => [],
    step: (parts, i) => void parts.push(texts[names[i]]),
    result: (parts) => parts.join('|'),
  });
  const count = names.length;
  check('aggregate result', () =>
    db.prepare('SELECT length(joined(value)), joined(value) = ? FROM json_each(?)').raw()
      .get(names.map((n) => texts[n]).join('|'), JSON.stringify([...names.keys()])));
  db.aggregate('latest', {
    start: null,
    step: (_, i) => texts[names[i]],
    inverse: () => {},
  });
  check('window values', () =>
    db.prepare('SELECT length(latest(value) OVER (ORDER BY key ROWS 1 PRECEDING)) FROM json_each(?)').pluck()
      .all(JSON.stringify([...names.keys()])));
  db.table('text_rows', {
    columns: ['name', 'v'],
    *rows() {
      for (const name of names) yield { name, v: texts[name] };
    },
  });
  check('table column', () =>
    db.prepare('SELECT name, length(v), octet_length(v) FROM text_rows').raw().all());
  check('table column read', () =>
    db.prepare('SELECT v FROM text_rows').pluck().all().every((v, i) => v === texts[names[i]]));
  check('count', () => count);
});

differential('function: a throw in the callback surfaces as itself through run/get/all/iterate', (db, check) => {
  table(db);
  const own = new RangeError('mine');
  db.function('fail_on', (x, at) => {
    if (x === at) throw own;
    return x;
  });
  check('get', () => db.prepare('SELECT fail_on(x, 3) FROM t WHERE x = 3').get(), own);
  check('all midway', () => db.prepare('SELECT fail_on(x, 4) FROM t').all(), own);
  check('iterate', () => [...db.prepare('SELECT fail_on(x, 2) FROM t').iterate()], own);
  check('run', () => db.prepare('UPDATE t SET x = fail_on(x, 5)').run(), own);
  check('statement undone', () => db.prepare('SELECT x FROM t').pluck().all());
  check('exec', () => db.exec('SELECT fail_on(1, 1)'), own);
  db.function('throws_string', () => {
    throw 'plain string';
  });
  check('non-error value', () => db.prepare('SELECT throws_string()').get());
  check('usable after', () => db.prepare('SELECT fail_on(1, 0)').pluck().get());
  const tx = db.transaction(() => {
    db.prepare("INSERT INTO t (x, label) VALUES (100, 'tx')").run();
    db.prepare('SELECT fail_on(1, 1)').get();
  });
  check('transaction', () => tx(), own);
  check('rolled back', () => [db.inTransaction, db.prepare('SELECT count(*) FROM t WHERE x = 100').pluck().get()]);
  db.exec('BEGIN');
  check('inside BEGIN', () => db.prepare('SELECT fail_on(1, 1)').get(), own);
  check('still in transaction', () => db.inTransaction);
  db.exec('COMMIT');
});

differential('function: the connection is busy while a statement runs the callback', (db, check) => {
  table(db);
  const other = db.prepare('SELECT 1');
  const cached = db.prepare('SELECT 7');
  const calls = {
    prepare: () => db.prepare('SELECT 2'),
    prepareAgain: () => db.prepare('SELECT 7'),
    pluck: () => cached.pluck(),
    raw: () => cached.raw(false),
    expand: () => cached.expand(),
    columns: () => cached.columns(),
    bind: () => db.prepare('SELECT ?').bind(1),
    exec: () => db.exec('SELECT 2'),
    get: () => other.get(),
    run: () => db.prepare('SELECT 1').run(),
    pragma: () => db.pragma('user_version'),
    register: () => db.function('late', () => 1),
    transaction: () => db.transaction(() => 1)(),
    close: () => db.close(),
  };
  for (const [name, call] of Object.entries(calls)) {
    db.function(`use_${name}`, () => {
      call();
      return 1;
    });
    check(`${name} in get`, () => db.prepare(`SELECT use_${name}()`).get());
    check(`${name} in exec`, () => db.exec(`SELECT use_${name}()`));
    check(`${name} in iterate`, () => [...db.prepare(`SELECT use_${name}() FROM t`).iterate()]);
  }
  check('mode switch on a closed connection', () => {
    const closing = new db.constructor(':memory:');
    const stmt = closing.prepare('SELECT 1');
    closing.close();
    return stmt.pluck() === stmt;
  });
  db.function('caught', () => {
    try {
      db.prepare('SELECT 3');
      return 'no';
    } catch (error) {
      return error.message;
    }
  });
  check('caught busy', () => db.prepare('SELECT caught()').pluck().get());
  const second = new db.constructor(':memory:');
  db.function('elsewhere', () => second.prepare('SELECT 40 + 2').pluck().get());
  check('another connection is not busy', () => db.prepare('SELECT elsewhere()').pluck().get());
  second.function('back', () => db.prepare('SELECT 1'));
  db.function('round_trip', () => second.prepare('SELECT back()').get());
  check('busy through another connection', () => db.prepare('SELECT round_trip()').get());
  second.close();
  const it = db.prepare('SELECT x FROM t').iterate();
  it.next();
  check('register while iterating', () => db.function('f', () => 1));
  check('aggregate while iterating', () => db.aggregate('g', { step() {} }));
  check('table while iterating', () => db.table('h', { columns: ['a'], *rows() {} }));
  it.return();
  check('open again', () => db.function('f', () => 1).prepare('SELECT f()').pluck().get());
});

differential('function: argument checks, directOnly, deterministic and SQLite refusals', (db, check) => {
  table(db);
  const fn = (x) => x;
  check('name', () => db.function(1, fn));
  check('no fn', () => db.function('f'));
  check('options', () => db.function('f', 'x', fn));
  check('empty', () => db.function('', fn));
  check('boolean option', () => db.function('f', { varargs: 1 }, fn));
  check('safeIntegers option', () => db.function('f', { safeIntegers: 'yes' }, fn));
  check('too many', () => db.function('f', new Function(...Array.from({ length: 101 }, (_, i) => `a${i}`), 'return 1')));
  check('100 is fine', () => db.function('f100', new Function(...Array.from({ length: 100 }, (_, i) => `a${i}`), 'return 1')) === db);
  const odd = () => 1;
  Object.defineProperty(odd, 'length', { value: -1 });
  check('bad length', () => db.function('f', odd));
  check('long name', () => db.function('x'.repeat(300), fn));
  db.function('direct', { directOnly: true }, fn);
  check('direct at top level', () => db.prepare('SELECT direct(1)').pluck().get());
  db.exec('CREATE VIEW v AS SELECT direct(x) AS d FROM t');
  check('direct in view', () => db.prepare('SELECT * FROM v').all());
  db.function('loose', fn);
  check('non-deterministic index', () => db.exec('CREATE INDEX i1 ON t (loose(x))'));
  db.function('pure', { deterministic: true }, fn);
  check('deterministic index', () => db.exec('CREATE INDEX i2 ON t (pure(x))') === db);
  check('index used', () => db.prepare('SELECT count(*) FROM t WHERE pure(x) > 2').pluck().get());
  db.close();
  check('closed', () => db.function('f', fn));
});

differential('aggregate: start, step, result, groups, empty input', (db, check) => {
  table(db);
  db.aggregate('addAll', { start: 0, step: (total, next) => total + next });
  check('sum', () => db.prepare('SELECT addAll(x) FROM t').pluck().get());
  check('empty', () => db.prepare('SELECT addAll(x) FROM t WHERE 0').pluck().get());
  check('groups', () => db.prepare('SELECT label, addAll(x) AS s FROM t GROUP BY label').all());
  db.aggregate('collect', {
    start: () => [],
    step: (array, next) => {
      array.push(next);
    },
    result: (array) => array.join('+'),
  });
  check('start function per group', () => db.prepare('SELECT label, collect(x) AS c FROM t GROUP BY label').all());
  check('empty start function', () => db.prepare('SELECT collect(x) FROM t WHERE 0').pluck().get());
  const shared = [];
  db.aggregate('sharedStart', { start: shared, step: (a, v) => void a.push(v), result: (a) => a.length });
  check('start value shared', () => db.prepare('SELECT label, sharedStart(x) AS n FROM t GROUP BY label').all());
  db.aggregate('noStart', { step: (acc, v) => (acc === null ? `first:${v}` : acc) });
  check('start defaults to null', () => db.prepare('SELECT noStart(x) FROM t').pluck().get());
  db.aggregate('pairs', { start: 0, step: (acc, a, b) => acc + a * b });
  check('two arguments', () => db.prepare('SELECT pairs(x, x) FROM t').pluck().get());
  check('wrong count', () => db.prepare('SELECT pairs(x) FROM t').pluck().get());
  db.aggregate('many', { varargs: true, start: 0, step: (acc, ...args) => acc + args.length });
  check('varargs', () => db.prepare('SELECT many(x, x, x), many() FROM t').raw().get());
  db.aggregate('bigs', { safeIntegers: true, start: 0n, step: (acc, v) => acc + v });
  check('safeIntegers', () => db.prepare('SELECT bigs(x) + 0, typeof(bigs(x)) FROM t').raw().get());
  db.aggregate('undefinedResult', { start: 1, step: () => undefined, result: () => undefined });
  check('undefined result', () => db.prepare('SELECT undefinedResult(x) FROM t').pluck().get());
  check('distinct', () => db.prepare('SELECT addAll(DISTINCT label || x) FROM t').pluck().get());
  db.aggregate('typed', { start: () => ({}), step: () => {}, result: (o) => o });
  check('invalid result', () => db.prepare('SELECT typed(x) FROM t').get());
});

differential('aggregate: window functions with inverse, and without', (db, check) => {
  table(db);
  db.aggregate('addAll', {
    start: 0,
    step: (total, next) => total + next,
    inverse: (total, dropped) => total - dropped,
    result: (total) => Math.round(total),
  });
  const windowed = (fn, frame) => `SELECT x, ${fn}(x) OVER (ORDER BY id ${frame}) AS w FROM t`;
  check('sliding', () => db.prepare(windowed('addAll', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW')).all());
  check('running', () => db.prepare(windowed('addAll', '')).all());
  check('partitioned', () => db.prepare('SELECT label, x, addAll(x) OVER (PARTITION BY label ORDER BY id) AS w FROM t').all());
  check('as plain aggregate', () => db.prepare('SELECT addAll(x) FROM t').pluck().get());
  db.aggregate('calls', {
    start: () => ({ steps: 0, inverses: 0 }),
    step: (s) => void (s.steps += 1),
    inverse: (s) => void (s.inverses += 1),
    result: (s) => `${s.steps}/${s.inverses}`,
  });
  check('callbacks seen', () => db.prepare(windowed('calls', 'ROWS BETWEEN 2 PRECEDING AND CURRENT ROW')).all());
  db.aggregate('plain', { start: 0, step: (t, v) => t + v });
  check('no inverse in a window', () => db.prepare(windowed('plain', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW')).all());
  const own = new Error('inverse failed');
  db.aggregate('badInverse', { start: 0, step: (t, v) => t + v, inverse: () => { throw own; } });
  check('inverse throws', () => db.prepare(windowed('badInverse', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW')).all(), own);
  check('usable after', () => db.prepare(windowed('addAll', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW')).all().length);
});

differential('aggregate: throwing callbacks and option checks', (db, check) => {
  table(db);
  const own = new TypeError('own');
  const thrower = () => {
    throw own;
  };
  db.aggregate('badStep', { start: 0, step: thrower });
  check('step throws', () => db.prepare('SELECT badStep(x) FROM t').get(), own);
  db.aggregate('badStart', { start: thrower, step: (t) => t });
  check('start throws', () => db.prepare('SELECT badStart(x) FROM t').get(), own);
  check('start throws on empty', () => db.prepare('SELECT badStart(x) FROM t WHERE 0').get(), own);
  db.aggregate('badResult', { start: 0, step: (t) => t, result: thrower });
  check('result throws', () => db.prepare('SELECT badResult(x) FROM t').get(), own);
  check('in group by', () => db.prepare('SELECT label, badStep(x) FROM t GROUP BY label').all(), own);
  check('usable after', () => db.prepare('SELECT count(*) FROM t').pluck().get());
  check('name', () => db.aggregate(null, { step() {} }));
  check('options', () => db.aggregate('a'));
  check('options null', () => db.aggregate('a', null));
  check('empty name', () => db.aggregate('', { step() {} }));
  check('missing step', () => db.aggregate('a', {}));
  check('step not function', () => db.aggregate('a', { step: 1 }));
  check('inverse not function', () => db.aggregate('a', { step() {}, inverse: 'x' }));
  check('result not function', () => db.aggregate('a', { step() {}, result: {} }));
  check('boolean options', () => db.aggregate('a', { step() {}, deterministic: 'yes' }));
  check('too many', () => db.aggregate('a', { step: new Function(...Array.from({ length: 102 }, (_, i) => `a${i}`), '') }));
  check('zero-length step', () => db.aggregate('zero', { start: 5, step() {} }).prepare('SELECT zero()').pluck().get());
  db.aggregate('directAgg', { directOnly: true, start: 0, step: (t, v) => t + v });
  db.exec('CREATE VIEW v AS SELECT directAgg(x) AS d FROM t');
  check('directOnly in view', () => db.prepare('SELECT * FROM v').all());
});

differential('table: definitions, rows as arrays or objects, parameters and hidden columns', (db, check) => {
  table(db);
  db.table('sequence', {
    columns: ['value'],
    parameters: ['length', 'start'],
    *rows(length, start = 0) {
      if (length === undefined) throw new TypeError('missing required parameter "length"');
      for (let n = start; n < start + length; ++n) yield { value: n };
    },
  });
  check('args', () => db.prepare('SELECT * FROM sequence(4)').pluck().all());
  check('two args', () => db.prepare('SELECT * FROM sequence(3, 10)').pluck().all());
  check('hidden columns', () => db.prepare('SELECT value, length, start FROM sequence(2, 5)').all());
  check('select star', () => db.prepare('SELECT * FROM sequence(2)').columns().map((c) => c.name));
  check('missing required', () => db.prepare('SELECT * FROM sequence').all());
  check('NULL argument', () => db.prepare('SELECT * FROM sequence(NULL)').all());
  check('as equality', () => db.prepare('SELECT value FROM sequence WHERE length = 2 AND start = 7').pluck().all());
  check('not equality', () => db.prepare('SELECT value FROM sequence WHERE length > 2').all());
  check('joined', () => db.prepare('SELECT t.x, s.value FROM t, sequence(t.x) AS s WHERE t.x < 3').raw().all());
  check('bound', () => db.prepare('SELECT * FROM sequence(?, ?)').pluck().all(3, 1));
  db.table('regex_matches', {
    columns: ['match', 'capture'],
    *rows(pattern, text) {
      const regex = new RegExp(pattern, 'g');
      let match;
      while ((match = regex.exec(text))) yield [match[0], match[1]];
    },
  });
  check('inferred parameters', () => db.prepare("SELECT * FROM regex_matches('\\$(\\d+)', ?)").all('Desks cost $500 and chairs cost $27'));
  check('inferred names', () => db.prepare("SELECT \"$1\", \"$2\", match FROM regex_matches('a', 'aa')").all());
  db.table('values', {
    columns: ['v', 't'],
    *rows() {
      for (const v of [1, 2.5, 'x', Buffer.from([9]), null, 3n, undefined]) yield [v, typeof v];
    },
  });
  check('column values', () => db.prepare('SELECT v, t, typeof(v) AS type FROM "values"').all());
  check('rowid', () => db.prepare('SELECT rowid, v FROM "values"').raw().all());
  db.table('bigs', {
    columns: ['kind'],
    parameters: ['n'],
    safeIntegers: true,
    *rows(n) {
      yield [typeof n];
    },
  });
  check('safeIntegers', () => db.prepare('SELECT kind FROM bigs(5)').pluck().get());
  db.table('direct', { columns: ['a'], directOnly: true, *rows() { yield [1]; } });
  check('directOnly top level', () => db.prepare('SELECT * FROM direct').all());
  db.exec('CREATE VIEW dv AS SELECT * FROM direct');
  check('directOnly in view', () => db.prepare('SELECT * FROM dv').all());
  const original = Buffer.from([1, 2]);
  db.table('mutates', {
    columns: ['seen'],
    *rows(buffer) {
      buffer[0] = 99;
      yield [buffer[0]];
    },
  });
  check('buffer argument copied', () => db.prepare('SELECT seen, "$1" FROM mutates(?)').raw().get(original));
});

differential('table: bad rows, throwing generators and definition checks', (db, check) => {
  const own = new Error('generator failed');
  const define = (name, rows, extra = {}) => db.table(name, { columns: ['a', 'b'], rows, ...extra });
  define('short', function* () { yield [1]; });
  check('short row', () => db.prepare('SELECT * FROM short').all());
  define('extra', function* () { yield { a: 1, b: 2, c: 3 }; });
  check('undeclared column', () => db.prepare('SELECT * FROM extra').all());
  define('missing', function* () { yield { a: 1 }; });
  check('missing column', () => db.prepare('SELECT * FROM missing').all());
  define('scalar', function* () { yield 5; });
  check('not a row', () => db.prepare('SELECT * FROM scalar').all());
  define('invalid', function* () { yield [{}, 1]; });
  check('invalid value', () => db.prepare('SELECT * FROM invalid').all());
  define('huge', function* () { yield [2n ** 64n, 1]; });
  check('bigint too big', () => db.prepare('SELECT * FROM huge').all());
  define('throws', function* () { yield [1, 2]; throw own; });
  check('generator throws', () => db.prepare('SELECT * FROM throws').all(), own);
  check('generator throws (iterate)', () => [...db.prepare('SELECT * FROM throws').iterate()], own);
  check('usable after', () => db.prepare('SELECT count(*) FROM short WHERE 0').pluck().get());
  const bad = {
    name: () => db.table(1, {}),
    empty: () => db.table('', {}),
    factory: () => db.table('x', 5),
    rows: () => db.table('x', { columns: ['a'] }),
    columns: () => db.table('x', { *rows() {} }),
    notGenerator: () => db.table('x', { columns: ['a'], rows() {} }),
    columnType: () => db.table('x', { columns: ['a', 1], *rows() {} }),
    columnsDuplicate: () => db.table('x', { columns: ['a', 'a'], *rows() {} }),
    zeroColumns: () => db.table('x', { columns: [], *rows() {} }),
    parameters: () => db.table('x', { columns: ['a'], parameters: 'p', *rows() {} }),
    parametersDuplicate: () => db.table('x', { columns: ['a'], parameters: ['p', 'p'], *rows() {} }),
    tooManyParameters: () => db.table('x', { columns: ['a'], parameters: Array.from({ length: 33 }, (_, i) => `p${i}`), *rows() {} }),
    ambiguous: () => db.table('x', { columns: ['a'], parameters: ['a'], *rows() {} }),
    safeIntegers: () => db.table('x', { columns: ['a'], safeIntegers: 1, *rows() {} }),
    directOnly: () => db.table('x', { columns: ['a'], directOnly: 'no', *rows() {} }),
  };
  for (const [name, call] of Object.entries(bad)) check(`definition ${name}`, call);
  check('quoted names', () => db.table('quotes', { columns: ['a"b', 'c d'], *rows() { yield [1, 2]; } }).prepare('SELECT * FROM quotes').get());
});

differential('table: the factory form, one table per CREATE VIRTUAL TABLE', (db, check) => {
  const seen = [];
  db.table('csv', function (...args) {
    seen.push({ self: { ...this }, args });
    const columns = args.length ? args.map((a) => a.trim()) : ['none'];
    return {
      columns,
      *rows() {
        yield columns.map((c, i) => `${c}:${i}`);
      },
    };
  });
  check('no eponymous table', () => db.prepare('SELECT * FROM csv').all());
  db.exec('CREATE VIRTUAL TABLE first USING csv(alpha, beta)');
  db.exec('CREATE VIRTUAL TABLE second USING csv(gamma)');
  db.exec('CREATE VIRTUAL TABLE third USING csv');
  check('first', () => db.prepare('SELECT * FROM first').all());
  check('second', () => db.prepare('SELECT * FROM second').all());
  check('third', () => db.prepare('SELECT * FROM third').all());
  check('factory calls', () => seen);
  db.table('broken', () => 5);
  check('not a definition', () => db.exec('CREATE VIRTUAL TABLE b1 USING broken(x)'));
  db.table('throwing', () => {
    throw new SyntaxError('bad arguments');
  });
  check('factory throws', () => db.exec('CREATE VIRTUAL TABLE b2 USING throwing(x)'));
  db.table('invalidDef', () => ({ columns: 'a', *rows() {} }));
  check('returned invalid', () => db.exec('CREATE VIRTUAL TABLE b3 USING invalidDef'));
  check('usable after', () => db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get());
});

test('store.db: functions, aggregates and tables on the store connection, inside store transactions', (t) => {
  const store = createStore(join(tempDir(t), 'hub.db'));
  t.after(() => store.close());
  store.registerAgent({ agent_id: 'a1', cli: 'codex' });
  store.registerAgent({ agent_id: 'a2', cli: 'claude' });
  const { db } = store;
  db.function('shout', (s) => s.toUpperCase());
  db.aggregate('joined', { start: () => [], step: (a, v) => void a.push(v), result: (a) => a.sort().join(',') });
  db.table('ids', { columns: ['id'], *rows() { yield ['a1']; yield ['zz']; } });
  assert.deepEqual(db.prepare('SELECT shout(cli) FROM agents ORDER BY agent_id').pluck().all(), ['CODEX', 'CLAUDE']);
  assert.equal(db.prepare('SELECT joined(agent_id) FROM agents').pluck().get(), 'a1,a2');
  assert.deepEqual(db.prepare('SELECT a.cli FROM ids JOIN agents a ON a.agent_id = ids.id').pluck().all(), ['codex']);
  const own = new Error('stop');
  db.function('stop', () => {
    throw own;
  });
  const tx = db.transaction(() => {
    store.registerAgent({ agent_id: 'a3', cli: 'codex' });
    db.prepare('SELECT stop()').get();
  });
  assert.equal(assert.throws(tx, (e) => e === own), undefined);
  assert.equal(db.inTransaction, false);
  assert.equal(store.getAgent('a3'), null);
  assert.equal(store.listAllAgents().length, 2);
  // The store's methods run statements on the same connection: busy, as on better-sqlite3.
  db.function('peek', (id) => store.getAgent(id)?.cli ?? null);
  assert.throws(() => db.prepare("SELECT peek('a1')").get(), { name: 'TypeError', message: 'This database connection is busy executing a query' });
  assert.equal(store.getAgent('a1').cli, 'codex');
  const other = new EsmDatabase(':memory:');
  t.after(() => other.close());
  other.function('peek', (id) => store.getAgent(id)?.cli ?? null);
  assert.equal(other.prepare("SELECT peek('a2')").pluck().get(), 'claude');
});

test('a callback that throws leaves nothing behind: many throws, then normal use', (t) => {
  const db = new EsmDatabase(join(tempDir(t), 'u.db'));
  t.after(() => db.close());
  db.function('maybe', (x) => {
    if (x % 2) throw new Error(`odd ${x}`);
    return x;
  });
  db.aggregate('maybeSum', { start: 0, step: (acc, x) => {
    if (x === 7) throw new Error('seven');
    return acc + x;
  } });
  for (let i = 0; i < 2000; i++) {
    assert.throws(() => db.prepare('SELECT maybe(?)').get(i * 2 + 1), { message: `odd ${i * 2 + 1}` });
    assert.throws(() => db.prepare('SELECT maybeSum(value) FROM json_each(?)').get('[1,7,3]'), { message: 'seven' });
  }
  assert.equal(db.prepare('SELECT maybe(?)').pluck().get(4), 4);
  assert.equal(db.prepare('SELECT maybeSum(value) FROM json_each(?)').pluck().get('[1,2,3]'), 6);
});

differential('callbacks without safeIntegers take the connection default at registration', (db, check) => {
  table(db);
  const kinds = (...values) => values.map((v) => typeof v).join(',');
  db.defaultSafeIntegers(true);
  db.function('kinds_on', { varargs: true }, kinds);
  db.aggregate('kind_on', { start: () => '', step: (acc, x) => acc + typeof x, result: (acc) => acc });
  db.table('ints_on', { columns: ['v'], parameters: ['p'], *rows(p) { yield [typeof p]; } });
  db.defaultSafeIntegers(false);
  db.function('kinds_off', { varargs: true }, kinds);
  db.function('kinds_forced', { varargs: true, safeIntegers: true }, kinds);
  check('function registered while on', () => db.prepare('SELECT kinds_on(1, 2.5, x) FROM t').pluck().all());
  check('function registered while off', () => db.prepare('SELECT kinds_off(1, 2.5, x) FROM t').pluck().all());
  check('explicit option', () => db.prepare('SELECT kinds_forced(1, 2.5)').pluck().get());
  check('aggregate', () => db.prepare('SELECT kind_on(x) FROM t').pluck().get());
  check('table parameter', () => db.prepare('SELECT v FROM ints_on(7)').pluck().get());
});

// One statement step that runs many callbacks: they share handle scopes, renewed every
// few hundred callbacks and closed when the step returns, however it returns.
differential('many callbacks in one step: values, throws late, nested statements and tables', (db, check) => {
  const rows = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) ';
  db.function('label', (x) => `#${x}`);
  db.function('late', (x) => {
    if (x === 1000) throw new Error('the 1000th row');
    return x;
  });
  db.aggregate('collect', { start: () => [], step: (list, x) => { list.push(x); } , result: (list) => list.length + list[999] });
  db.aggregate('objects', { start: () => ({ n: 0 }), step: (acc, x) => ({ n: acc.n + x }), result: (acc) => acc.n });
  db.aggregate('moving', { start: 0, step: (t, x) => t + x, inverse: (t, x) => t - x });
  check('strings', () => db.prepare(`${rows}SELECT length(group_concat(label(i), '')), max(label(i)) FROM n`).raw().get());
  check('objects', () => db.prepare(`${rows}SELECT collect(i), objects(i) FROM n`).raw().get());
  check('window', () => db.prepare(`${rows}SELECT sum(m) FROM (SELECT moving(i) OVER (ORDER BY i ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS m FROM n)`).pluck().get());
  check('throws at the 1000th row', () => db.prepare(`${rows}SELECT sum(late(i)) FROM n`).pluck().get());
  check('usable after', () => db.prepare(`${rows}SELECT sum(late(i)) FROM n WHERE i <> 1000`).pluck().get());
  check('iterate', () => [...db.prepare(`${rows}SELECT sum(label(i) = '#' || i) FROM n`).pluck().iterate()]);
  const other = new db.constructor(':memory:');
  try {
    other.function('double', (x) => x * 2);
    other.aggregate('total', { start: 0, step: (t, x) => t + x });
    const inner = other.prepare(`${rows}SELECT total(double(i)) + ? FROM n WHERE i <= 300`).pluck();
    db.function('nested', (x) => (x % 500 === 0 ? inner.get(x) : x));
    check('a statement of another database inside each callback', () => db.prepare(`${rows}SELECT sum(nested(i)) FROM n`).pluck().get());
    other.table('upto', { columns: ['v'], *rows(n) { for (let v = 1; v <= n; v++) yield [v]; } });
    const scan = other.prepare('SELECT sum(v) FROM upto(?)').pluck();
    db.function('scanned', (x) => (x % 300 === 0 ? scan.get(x) : 0));
    check('a generator table scanned inside a function', () => db.prepare(`${rows}SELECT sum(scanned(i)) FROM n`).pluck().get());
    db.function('inner_throws', (x) => (x === 2500 ? other.prepare('SELECT nope()').get() : x));
    check('a nested statement that fails late', () => db.prepare(`${rows}SELECT sum(inner_throws(i)) FROM n`).pluck().get());
    db.function('same_db', (x) => (x === 1500 ? db.prepare('SELECT 1').get() : x));
    check('the same database from inside, late', () => db.prepare(`${rows}SELECT sum(same_db(i)) FROM n`).pluck().get());
  } finally {
    other.close();
  }
  check('after the nested runs', () => db.prepare(`${rows}SELECT collect(label(i)) FROM n`).pluck().get());
});

differential('the call frame: many arguments, nested frames, groups after a throw, BigInt arguments', (db, check) => {
  const values = ['1', '-2147483649', '2147483647', '2147483648', '9007199254740993', '1.5', "'t'", 'x\'00ff\'', 'NULL', '-0.0'];
  const list = (n) => Array.from({ length: n }, (_, i) => values[i % values.length]).join(', ');
  const describeAll = (...xs) => xs.map((x) => (Buffer.isBuffer(x) ? `buf:${x.toString('hex')}` : `${typeof x}:${String(x)}`)).join(' ');
  db.function('all_of', { varargs: true }, describeAll);
  db.function('all_big', { varargs: true, safeIntegers: true }, describeAll);
  for (const n of [0, 1, 3, 15, 16, 17, 40, 100]) {
    check(`varargs ${n}`, () => db.prepare(`SELECT all_of(${list(n)})`).pluck().get());
    check(`varargs ${n}, safeIntegers`, () => db.prepare(`SELECT all_big(${list(n)})`).pluck().get());
  }
  const twenty = function twenty(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t) {
    return describeAll(...arguments);
  };
  db.function('twenty', twenty);
  check('fixed 20 arguments', () => db.prepare(`SELECT twenty(${list(20)})`).pluck().get());
  db.aggregate('agg_many', { start: '', step: (acc, ...xs) => `${acc}|${describeAll(...xs)}`, varargs: true });
  check('aggregate varargs past the frame', () => db.prepare(`SELECT agg_many(${list(19)}) FROM (SELECT 1 UNION ALL SELECT 2)`).pluck().get());

  // A callback whose own query runs callbacks of another connection: the outer frame's
  // arguments and result must survive them.
  const other = new db.constructor(':memory:');
  try {
    other.function('inner', (a, b) => a * 1000 + b);
    other.aggregate('inner_sum', { start: 0.5, step: (t, x) => t + x });
    const inner = other.prepare('SELECT inner(?, ?) + (SELECT inner_sum(v) FROM (SELECT 7 AS v UNION ALL SELECT 8))').pluck();
    db.function('outer_number', (a, b) => inner.get(b, a) + a * b);
    db.function('outer_text', (a, b) => `${inner.get(a, b)}:${a}:${b}`);
    check('nested, number results', () => db.prepare('SELECT outer_number(3, 4), outer_number(2.5, -1), outer_text(5, 6)').raw().get());
    db.aggregate('outer_agg', { start: () => 0, step: (t, x) => t + inner.get(x, 1) });
    table(db);
    check('nested inside an aggregate', () => db.prepare('SELECT label, outer_agg(x) FROM t GROUP BY label').raw().all());
  } finally {
    other.close();
  }

  // An aggregate's groups after a throw mid-group: the statement runs again from fresh groups.
  let calls = 0;
  db.aggregate('flaky', {
    start: () => [],
    step: (acc, x) => {
      if (++calls === 4) throw new Error('the 4th step');
      acc.push(x);
    },
    inverse: (acc) => {
      acc.shift();
    },
    result: (acc) => acc.join(','),
  });
  db.aggregate('number_groups', { start: 10, step: (t, x) => t + x, inverse: (t, x) => t - x });
  const grouped = db.prepare('SELECT label, flaky(x), number_groups(x) FROM t GROUP BY label');
  check('throws mid-aggregate', () => grouped.raw().all());
  check('the same statement again', () => grouped.raw().all());
  const windowed = db.prepare('SELECT flaky(x) OVER w, number_groups(x) OVER w FROM t WINDOW w AS (PARTITION BY label ORDER BY id ROWS 1 PRECEDING)');
  calls = 0;
  check('window throws mid-frame', () => windowed.raw().all());
  check('the same window again', () => windowed.raw().all());
  check('no rows', () => db.prepare('SELECT flaky(x), number_groups(x) FROM t WHERE 0').raw().get());
  db.aggregate('big_sum', { start: 0n, step: (t, x) => t + x, safeIntegers: true });
  check('BigInt arguments and running value', () => db.prepare('SELECT big_sum(x * 4611686018427387903) FROM t WHERE x <= 2').pluck().safeIntegers().get());
});
