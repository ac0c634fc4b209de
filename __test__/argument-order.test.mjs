// The store evaluates a caller's arguments in JavaScript, as the original did, before any
// statement runs, and binds a row in the statement's parameter order. Each case runs on
// this package's store and on the original's methods over better-sqlite3
// (bench/baseline.mjs), each on its own file, and compares what a caller sees.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { createStore } from '../index.mjs';
import { referenceSkip, tempDir, thrown } from './helpers.mjs';

/** This package's store and the original's (the reference is loaded only where it runs). */
async function bothStores(t) {
  const { createBaselineStore } = await import('../bench/baseline.mjs');
  const dir = tempDir(t);
  const ours = createStore(join(dir, 'native.db'));
  const theirs = createBaselineStore(join(dir, 'original.db'));
  t.after(() => {
    ours.close();
    theirs.close();
  });
  return { ours, theirs };
}

const messageCount = (store) => store.db.prepare('SELECT COUNT(*) FROM messages').pluck().get();
const errorOf = (fn) => {
  const error = thrown(fn);
  return { name: error.name, message: error.message };
};

test('a write made by a callback during createAssign stays when the INSERT then fails', { skip: referenceSkip }, async (t) => {
  const outcome = (store) => {
    const error = errorOf(() =>
      store.createAssign({
        supervisor_agent: true, // a boolean cannot be bound: the INSERT fails
        worker_agent: 'w',
        result: {
          toJSON() {
            store.auditLog({ type: 'event', from: 'callback', to: 'b', topic: 't' });
            return 'r';
          },
        },
      }),
    );
    return { error, messages: messageCount(store), jobs: store.db.prepare('SELECT COUNT(*) FROM assign_jobs').pluck().get() };
  };
  const { ours, theirs } = await bothStores(t);
  const expected = outcome(theirs);
  assert.deepEqual(expected, {
    error: { name: 'TypeError', message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null' },
    messages: 1,
    jobs: 0,
  });
  assert.deepEqual(outcome(ours), expected);
});

test('with two unbindable values, the error is the one of the earlier parameter', { skip: referenceSkip }, async (t) => {
  const huge = 2n ** 70n;
  const message = { type: 'event', from: 'a', to: 'b', topic: 't' };
  const cases = [
    { ...message, type: huge, trace_id: () => 1 }, // type (2nd) before trace_id (11th)
    { ...message, correlation_id: huge, status: {} }, // correlation_id (10th) before status (13th)
    { ...message, from: {}, status: huge }, // from_agent (3rd) before status
    { ...message, to: () => 1, role_key_wire: huge }, // to_agent (4th) before role_key_wire (14th)
  ];
  const { ours, theirs } = await bothStores(t);
  const expected = cases.map((args) => errorOf(() => theirs.auditLog(args)));
  assert.deepEqual(
    expected.map((e) => e.name),
    ['RangeError', 'RangeError', 'TypeError', 'TypeError'],
  );
  assert.deepEqual(
    cases.map((args) => errorOf(() => ours.auditLog(args))),
    expected,
  );
  assert.equal(messageCount(ours), 0);
});

test('the patch of updateAssignStatus is read in the original order, getters included', { skip: referenceSkip }, async (t) => {
  const reads = (store) => {
    const job = store.createAssign({ job_id: 'j1', supervisor_agent: 's', worker_agent: 'w' });
    const seen = [];
    const patch = {};
    const values = { timeout_ms: 2000, payload: { x: 1 }, priority: 3, result: { a: 1 }, deadline_ms: 99, started_at_ms: 7 };
    for (const [key, value] of Object.entries(values)) {
      Object.defineProperty(patch, key, {
        enumerable: true,
        get() {
          seen.push(key);
          return value;
        },
      });
    }
    const updated = store.updateAssignStatus(job.job_id, 'running', patch);
    const { status, result, payload, priority, deadline_ms, started_at_ms, timeout_ms } = updated;
    return { seen, row: { status, result, payload, priority, deadline_ms, started_at_ms, timeout_ms } };
  };
  const { ours, theirs } = await bothStores(t);
  const expected = reads(theirs);
  assert.ok(new Set(expected.seen).size < expected.seen.length, 'some getters run twice, as the original reads them twice');
  assert.deepEqual(reads(ours), expected);
});

test('a write made by a toJSON of transport_locators during upsertRoleCandidate stays when the upsert then fails', async (t) => {
  const store = createStore(join(tempDir(t), 'native.db'));
  t.after(() => store.close());
  const { encodeRoleKey } = await import('../bench/baseline.mjs');
  const wire = encodeRoleKey({ project_id: 'prj_benchproject0000000001', role_kind: 'cto' });
  let calls = 0;
  const error = thrown(() =>
    store.upsertRoleCandidate({
      role_key_wire: wire, // no such role: the upsert fails on its foreign key
      agent_id: 'a1',
      transport_locators: {
        toJSON() {
          calls++;
          store.auditLog({ type: 'event', from: 'callback', to: 'b', topic: 't' });
          return [];
        },
      },
    }),
  );
  assert.equal(error.code, 'SQLITE_CONSTRAINT_FOREIGNKEY');
  assert.equal(calls, 1);
  assert.equal(messageCount(store), 1, "the callback's message is kept, as the original (autocommit statements) kept it");
  assert.equal(store.db.prepare('SELECT COUNT(*) FROM role_candidates').pluck().get(), 0);
});

test('findReflexion with more context keys than SQLite has parameters fails as the original does', { skip: referenceSkip }, async (t) => {
  const { ours, theirs } = await bothStores(t);
  for (const size of [1_000, 32_767, 40_000]) {
    const context = Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}`, i]));
    const expected = errorOf(() => theirs.findReflexion('p', context));
    assert.deepEqual(expected, { name: 'SqliteError', message: 'Expression tree is too large (maximum depth 1000)' }, `${size} keys`);
    assert.deepEqual(errorOf(() => ours.findReflexion('p', context)), expected, `${size} keys`);
  }
});
