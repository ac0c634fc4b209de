// The wire between the JS layer and the binary is defined once, in Rust: the numbers
// lib/protocol.cjs holds are the binary's `protocol()`, name for name and in order, and
// a binary whose wire differs is refused by name.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const native = require('../lib/native.cjs');
const protocol = require('../lib/protocol.cjs');

test("lib/protocol.cjs holds the binary's wire, every name and number in its order", () => {
  const wire = native.load().protocol();
  assert.deepEqual(Object.entries(protocol.WIRE), Object.entries(wire));
  assert.equal(protocol.wireDifference(wire), null);
});

test('the result slots are dense and the call frame, the queue and the row lane fit in them', () => {
  const { WIRE } = protocol;
  const singles = ['LAST_ROWID', 'LAST_ROWID_BITS', 'ROW_FORM', 'BUSY', 'CALLBACKS', 'CALL_SHARED',
    'CALL_RESULT_TYPE', 'CALL_RESULT', 'CALL_STATE', 'CALL_FLAGS'].map((name) => WIRE[name]);
  assert.deepEqual([...singles].sort((a, b) => a - b), singles.map((_, i) => i));
  native.load();
  assert.equal(native.resultSlots().length, WIRE.SLOTS);
  assert.equal(WIRE.QUEUE + WIRE.QUEUE_SLOTS, WIRE.ROW_LANE);
  assert.equal(WIRE.ROW_LANE + WIRE.ROW_LANE_MAX, WIRE.SLOTS);
});

test('a wire that differs is named: the number here and in the binary', () => {
  const wire = { ...native.load().protocol(), ROW_FORM: 99 };
  assert.match(protocol.wireDifference(wire), /^ROW_FORM: \d+ here, 99 in the binary$/);
  const extra = { ...native.load().protocol(), NEW_SLOT: 1 };
  assert.match(protocol.wireDifference(extra), /^NEW_SLOT: undefined here, 1 in the binary$/);
});

test('the numbers the JS layer reads are the statement calls the binary answers', () => {
  const Database = require('../better-sqlite3.cjs');
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (a INTEGER, b TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (@a, @b)');
  // LAST_ROWID and LAST_ROWID_BITS, IN_ORDER (a named-parameter object).
  assert.deepEqual(insert.run({ a: 1, b: 'x' }), { changes: 1, lastInsertRowid: 1 });
  db.exec('INSERT INTO t (rowid, a) VALUES (9007199254740993, 2)');
  assert.equal(db.prepare('SELECT max(rowid) AS r FROM t').safeIntegers().get().r, 9007199254740993n);
  insert.safeIntegers();
  assert.deepEqual(insert.run({ a: 3, b: 'y' }), { changes: 1, lastInsertRowid: 9007199254740994n });
  // ROW_FORM and the forms: a lone value in each row mode.
  const one = db.prepare('SELECT b FROM t WHERE a = 1');
  assert.deepEqual(one.get(), { b: 'x' });
  assert.equal(one.pluck().get(), 'x');
  assert.deepEqual(one.raw().get(), ['x']);
  assert.deepEqual(one.expand().get(), { t: { b: 'x' } });
  // The call frame and the queue: a scalar function and an aggregate over numbers.
  db.function('twice', (x) => x * 2);
  db.aggregate('summed', { start: 0, step: (acc, x) => acc + x });
  assert.equal(db.prepare('SELECT twice(a) FROM t WHERE a = 3').pluck().get(), 6);
  assert.equal(db.prepare('SELECT summed(a) FROM t').pluck().get(), 6);
  db.close();
});
