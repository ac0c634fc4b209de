// Aggregate steps and inverses are queued and delivered to JS in batches
// (docs/user-functions.md "How aggregate calls are delivered"): every scenario here runs on
// better-sqlite3 and on this package and must record the same calls, in the same order,
// the same results and the same errors (the callback's own thrown value included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { BetterSqlite3, referenceSkip } from './helpers.mjs';

const require = createRequire(import.meta.url);
const Database = require('../better-sqlite3.cjs');

/** What `fn` gave, or what it threw (and whether that is `own`). */
function outcome(fn, own) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error: `${error?.constructor?.name} ${error?.code} ${error?.message ?? error}`, own: own !== undefined && error === own };
  }
}

// From Node 22 on, better-sqlite3 loses the statement's error when, after a callback threw,
// the `result` of another group in progress runs as SQLite ends the statement.
const losesErrors = Number(process.versions.node.split('.')[0]) >= 22
  && 'better-sqlite3 loses the error on this Node when another group\'s result runs after a throw';

function differential(name, scenario, skip = false) {
  test(name, { skip: referenceSkip || skip }, () => {
    const record = (D) => {
      const db = new D(':memory:');
      const seen = [];
      const log = [];
      try {
        db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, g, x, y)');
        db.exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 700)
          INSERT INTO t (g, x, y) SELECT i % 300, CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN i * 0.5 WHEN 2 THEN 9007199254740993 + i ELSE i END,
          CASE WHEN i = 500 THEN -9223372036854775808 ELSE i END FROM c`);
        scenario(db, log, (label, fn, own) => {
          seen.push([label, outcome(fn, own), log.splice(0).join(' ')]);
        });
      } finally {
        db.close();
      }
      return seen;
    };
    const expected = record(BetterSqlite3);
    assert.ok(expected.length > 0);
    assert.deepEqual(record(Database), expected);
  });
}

const num = (x) => (typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x % 1000n) : 0.5);

function register(db, log, { throwAt = 0, safe = false } = {}) {
  let calls = 0;
  const own = new Error(`step ${throwAt}`);
  db.aggregate('a', { safeIntegers: safe, start: 0, step: (s, x) => { log.push(`a${x}`); if (++calls === throwAt) throw own; return s + num(x); } });
  db.aggregate('b', { safeIntegers: safe, start: () => { log.push('b.start'); return ''; }, step: (s, x, y) => { log.push(`b${x},${y}`); return `${s.length}`; }, result: (s) => { log.push('b.result'); return `B${s}`; } });
  db.aggregate('w', { safeIntegers: safe, start: 0, step: (s, x) => { log.push(`w+${x}`); return s + num(x); }, inverse: (s, x) => { log.push(`w-${x}`); return s - num(x); } });
  db.function('f', { safeIntegers: safe }, (x) => { log.push(`f${x}`); return x; });
  return own;
}

differential('calls of several aggregates and scalar functions keep their order, past the queue bound', (db, log, check) => {
  register(db, log);
  check('one group', () => db.prepare('SELECT a(x), b(x, f(y)), f(count(*)) FROM t').raw().get());
  check('300 groups', () => db.prepare('SELECT g, a(x), b(f(x), y) FROM t GROUP BY g ORDER BY g').raw().all());
  check('text arguments among numbers', () => db.prepare("SELECT a(CASE WHEN id % 7 = 0 THEN 'x' || id ELSE x END), b(x, x'00') FROM t").raw().get());
  check('window', () => db.prepare('SELECT w(x) OVER (ORDER BY id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW), f(id) FROM t').raw().all());
  check('get() of a GROUP BY', () => db.prepare('SELECT g, a(x), b(x, y) FROM t GROUP BY g').raw().get());
  check('iterator left early', () => {
    const rows = [];
    for (const row of db.prepare('SELECT w(x) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS v FROM t').iterate()) {
      rows.push(row.v);
      if (rows.length === 3) break;
    }
    return rows;
  });
});

differential('safeIntegers arguments arrive as BigInts', (db, log, check) => {
  register(db, log, { safe: true });
  check('BigInts', () => db.prepare('SELECT a(x), b(x, y), a(y) FROM t').raw().get());
});

differential('a step that throws at row k stops the statement with its value; the statement then runs again', (db, log, check) => {
  const own = register(db, log, { throwAt: 300 });
  const stmt = db.prepare('SELECT a(x), b(x, y) FROM t');
  check('throws', () => stmt.raw().get(), own);
  check('again', () => stmt.raw().get());
  check('still usable', () => db.prepare('SELECT count(*) FROM t').pluck().get());
}, losesErrors);

differential('a SQLite error after a queued step that throws: the throw wins; before it: the SQLite error', (db, log, check) => {
  let own = register(db, log, { throwAt: 100 });
  check('throw first', () => db.prepare('SELECT a(x), sum(abs(y)) FROM t').get(), own);
  db.aggregate('a', { start: 0, step: (s, x) => { log.push(`a${x}`); if (x === 9007199254741593) throw own; return s + 1; } });
  own = new Error('late');
  check('SQLite error first', () => db.prepare('SELECT a(x), sum(abs(y)) FROM t').get(), own);
});

differential('other groups in progress get their result as a throw stops the statement; a throw there wins', (db, log, check) => {
  const own = register(db, log, { throwAt: 5 });
  check('result runs', () => db.prepare('SELECT b(x, y), a(x) FROM t').get(), own);
  const late = new RangeError('from result');
  db.aggregate('c', { start: 0, step: (s) => s + 1, result: () => { log.push('c.result'); throw late; } });
  db.aggregate('d', { start: 0, step: (s, x) => { log.push(`d${x}`); if (x === 4) throw own; return s; } });
  check('result throws', () => db.prepare('SELECT c(x), d(x) FROM t').get(), late);
}, losesErrors);

differential('a delivered step is busy on its connection and may query another', (db, log, check) => {
  register(db, log);
  const other = new (db.constructor)(':memory:');
  other.aggregate('o', { start: 0, step: (s, x) => { log.push(`o${x}`); return s + x; } });
  db.aggregate('nest', { start: 0, step: (s, x) => s + other.prepare('SELECT o(value) FROM (SELECT 1 AS value UNION ALL SELECT 2)').pluck().get() });
  db.aggregate('busy', { start: 0, step: (s) => s + db.prepare('SELECT 1').pluck().get() });
  try {
    check('nested', () => db.prepare('SELECT nest(x), a(x) FROM t WHERE id < 5').raw().get());
    check('busy', () => db.prepare('SELECT a(x), busy(x) FROM t').get());
  } finally {
    other.close();
  }
});
