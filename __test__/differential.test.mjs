// The differential suite's sample (the long run: `npm run test:differential`): generated
// cases on this package's Database and on better-sqlite3 for the running Node give the
// same results and errors; every special column name in every row mode; and the harness
// itself notices a difference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { describe } from './differential/describe.mjs';
import { execute } from './differential/execute.mjs';
import { compareCases, formatDifference } from './differential/run.mjs';
import { makeCase } from './differential/kinds.mjs';
import { SPECIAL_NAMES, ident } from './differential/random.mjs';
import { BetterSqlite3, referenceSkip } from './helpers.mjs';

const require = createRequire(import.meta.url);
const Database = require('../better-sqlite3.cjs');

const SEED = 20261201;

test('2,000 generated cases: the same results and errors as better-sqlite3', { skip: referenceSkip }, () => {
  const { cases, differences } = compareCases(BetterSqlite3, Database, { seed: SEED, count: 2000, max: 3 });
  assert.equal(cases, 2000);
  assert.deepEqual(differences.map((d) => formatDifference(SEED, d)), []);
});

test('1,500 generated callback and BigInt cases: the same results, errors and thrown values', { skip: referenceSkip }, () => {
  const kinds = ['function', 'aggregate', 'batched', 'table', 'safe-integers', 'from-buffer', 'unsafe', 'verbose'];
  const { cases, differences } = compareCases(BetterSqlite3, Database, { seed: SEED, count: 1500, kinds, max: 3 });
  assert.equal(cases, 1500);
  assert.deepEqual(differences.map((d) => formatDifference(SEED, d)), []);
});

test('every special column name, alone, repeated and beside others, in every row mode', { skip: referenceSkip }, () => {
  const values = ['NULL', '1', "'text'", "x'00ff'", '-0.0'];
  const steps = [];
  SPECIAL_NAMES.forEach((name, i) => {
    const v = values[i % values.length];
    const sql = [
      `SELECT ${v} AS ${ident(name)}`,
      `SELECT 1 AS a, ${v} AS ${ident(name)}, 2 AS ${ident(name)}, 3 AS a`,
      `SELECT ${v} AS ${ident(name)} UNION ALL SELECT 7`,
    ];
    for (const source of sql) {
      steps.push({ op: 'prepare', sql: source, as: 's' });
      for (const mode of [null, 'raw', 'pluck', 'expand']) {
        if (mode) steps.push({ op: 'mode', stmt: 's', which: mode, args: [] });
        steps.push({ op: 'call', stmt: 's', method: 'get', params: [] }, { op: 'call', stmt: 's', method: 'all', params: [] });
        steps.push({ op: 'forof', stmt: 's', params: [], breakAfter: 0, throwAfter: 0 });
      }
      steps.push({ op: 'call', stmt: 's', method: 'columns', params: [] });
    }
  });
  // Tables with such names, for expand()'s grouping by table.
  steps.push({ op: 'exec', sql: 'CREATE TABLE "__proto__" ("__proto__", "0", b); INSERT INTO "__proto__" VALUES (NULL, 1, 2)' });
  steps.push({ op: 'exec', sql: 'CREATE TABLE "$" (a, "$"); INSERT INTO "$" VALUES (x\'01\', 3)' });
  for (const source of ['SELECT *, 1 + 1 FROM "__proto__", "$"', 'SELECT "$".*, "__proto__".b, NULL AS "__proto__" FROM "$", "__proto__"']) {
    steps.push({ op: 'prepare', sql: source, as: 't' }, { op: 'mode', stmt: 't', which: 'expand', args: [] });
    steps.push({ op: 'call', stmt: 't', method: 'all', params: [] }, { op: 'call', stmt: 't', method: 'get', params: [] });
    steps.push({ op: 'forof', stmt: 't', params: [], breakAfter: 0, throwAfter: 0 });
  }
  assert.deepEqual(execute(Database, steps), execute(BetterSqlite3, steps));
});

test('a __proto__ column is an own property on Node 22+ and goes through the setter before', () => {
  const db = new Database(':memory:');
  const row = db.prepare('SELECT NULL AS "__proto__", 1 AS a').get();
  const expanded = db.prepare('SELECT NULL AS "__proto__", 1 AS a').expand().get();
  db.close();
  if (Number(process.versions.modules) >= 127) {
    assert.deepEqual(Object.getOwnPropertyDescriptor(row, '__proto__'), { value: null, writable: true, enumerable: true, configurable: true });
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
  } else {
    assert.equal(Object.hasOwn(row, '__proto__'), false);
    assert.equal(Object.getPrototypeOf(row), null);
  }
  // expand() assigns on every Node, as better-sqlite3 does.
  assert.equal(Object.getPrototypeOf(expanded.$), null);
  assert.deepEqual(Object.keys(expanded.$), ['a']);
});

test('the harness reports a difference, with the case to run again', () => {
  // A Database whose rows lose their last key: the comparison must notice.
  class Lossy extends Database {
    prepare(source) {
      const stmt = super.prepare(source);
      const get = stmt.get.bind(stmt);
      return Object.assign(Object.create(stmt), {
        get: (...args) => {
          const row = get(...args);
          if (row && typeof row === 'object' && !Array.isArray(row)) delete row[Object.keys(row).pop()];
          return row;
        },
      });
    }
  }
  const { differences } = compareCases(Database, Lossy, { seed: SEED, count: 300, kinds: ['select-expr'], max: 1 });
  assert.equal(differences.length, 1);
  const [d] = differences;
  assert.notEqual(d.reference, d.ours);
  // The case can be drawn again alone, and is the same case.
  assert.equal(describe(makeCase(SEED, d.index, ['select-expr']).steps), describe(d.steps));
  assert.match(formatDifference(SEED, d), new RegExp(`^case ${d.index} of seed ${SEED} \\(select-expr\\)`));
});

test('get() rows of 2 to 18 columns mixing every kind of value, as better-sqlite3 gives them', { skip: referenceSkip }, () => {
  // Rows of a few columns travel in the result slots, their texts in one string: texts
  // side by side, empty, non-ASCII, astral, invalid UTF-8 (and BLOBs) must all come apart right.
  const kinds = ["''", "'agent-001'", "'é'", "'😀x😀'", 'NULL', '7', '-0.0', '2.5', "CAST(x'ff41' AS TEXT)", "x'0102'",
    "char(55296)", "'a' || char(0) || 'b'", '9007199254740993', "'\uD800'"];
  const steps = [];
  for (let n = 2; n <= 18; n++) {
    for (let start = 0; start < kinds.length; start += 3) {
      const columns = Array.from({ length: n }, (_, i) => `${kinds[(start + i * (i + 1)) % kinds.length]} AS c${i % 7}`);
      steps.push({ op: 'prepare', sql: `SELECT ${columns.join(', ')}`, as: 's' }, { op: 'call', stmt: 's', method: 'get', params: [] });
    }
  }
  assert.deepEqual(execute(Database, steps), execute(BetterSqlite3, steps));
});
