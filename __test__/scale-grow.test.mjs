// A hub that starts small and grows while it runs gets the large-log indexes from its own
// calls: no sweepExpired (the hub never calls the store's), no reopen. The reference for
// the per-tick results is better-sqlite3 running the original store's statements on a
// file of the original schema holding the same rows (__test__/fixtures/original-tick-child.mjs).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Database, createStore } from '../index.mjs';
import { referenceSkip, repoRoot, tempDir } from './helpers.mjs';

const SCHEMA_SQL = readFileSync(join(repoRoot, 'src', 'store', 'schema.sql'), 'utf8');
const CHILD = join(repoRoot, '__test__', 'fixtures', 'original-tick-child.mjs');
const THRESHOLD = 10_000;
const RECIPIENTS = ['a1', 'a2', 'topic:t1', 'topic:t2', 'a3'];

function original(job) {
  const r = spawnSync(process.execPath, [CHILD], { input: JSON.stringify(job), encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const largeIndexes = (db) =>
  db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'idx_messages_to_agent_recent'").pluck().get() === 1;
const originalIndexes = (db) =>
  db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'idx_messages_to_agent'").pluck().get() === 1;
const counting = (db) => db.prepare("SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'store_counts'").pluck().get() === 1;

function logMessage(store, i) {
  const to = RECIPIENTS[i % RECIPIENTS.length];
  return store.auditLog({
    type: 'event',
    from: 'hub',
    to,
    topic: to.startsWith('topic:') ? to.slice(6) : ['t1', 't2', 't3'][i % 3],
    priority: 1 + (i % 9),
    ttl_ms: i % 4 === 0 ? -1 : 3_600_000,
    payload: { i },
    status: ['queued', 'delivered', 'acked'][i % 3],
  });
}

function tickCalls(now) {
  const calls = [];
  for (const agent of ['a1', 'a2', 'a3', 'nobody']) {
    for (const max_messages of [1, 20, 100]) {
      calls.push(['getAuditMessagesForAgent', agent, { max_messages }]);
      calls.push(['pollForAgent', agent, { max_messages, include_topics: ['t2', 't1'] }]);
    }
  }
  calls.push(['getQueueDepths'], ['getHubStats'], ['getAuditStats'], ['getDeliveryStats']);
  calls.push(['listPendingRoleMessages', 'rk2.eyJwcm9qZWN0X2lkIjoicHJqX2FhYWFhYWFhYWFhYWFhYWFhYWFhYWEiLCJyb2xlX2tpbmQiOiJjdG8ifQ', now]);
  return calls;
}

test('a log grown through auditLog converts in the call whose insert reaches the threshold', { skip: referenceSkip }, (t) => {
  const dir = tempDir(t);
  const ours = join(dir, 'native.db');
  const store = createStore(ours);
  t.after(() => store.close());
  store.registerAgent({ agent_id: 'a1', cli: 'codex', topics: ['t1', 't2'] });
  store.registerAgent({ agent_id: 'a2', cli: 'claude', topics: [] });

  for (let i = 1; i < THRESHOLD; i++) logMessage(store, i);
  // Reads below the threshold leave the original schema alone.
  store.getHubStats();
  store.getAuditMessagesForAgent('a1');
  assert.equal(largeIndexes(store.db), false);
  assert.equal(originalIndexes(store.db), true);

  const crossing = logMessage(store, THRESHOLD);
  assert.equal(crossing.payload.i, THRESHOLD, 'the crossing call returns its own row');
  assert.equal(store.getMessage(crossing.id).id, crossing.id);
  assert.equal(largeIndexes(store.db), true, 'converted by the insert that reached the threshold');
  assert.equal(originalIndexes(store.db), false, 'the replaced indexes are gone');

  for (let i = THRESHOLD + 1; i <= THRESHOLD + 200; i++) logMessage(store, i);
  const truth = store.db.prepare('SELECT COUNT(*) FROM messages').pluck().get();
  assert.equal(store.getHubStats().total_messages, truth);
  assert.equal(counting(store.db), true, 'the row counters serve the stats');

  // The same rows in a file of the original schema, read with the original statements.
  const now = Date.now();
  const theirs = join(dir, 'original.db');
  const dump = (table) => store.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).raw().all();
  original({ db: theirs, schemaSql: SCHEMA_SQL, rows: { agents: dump('agents'), messages: dump('messages') } });
  const calls = tickCalls(now);
  const expected = original({ db: theirs, calls });
  const actual = calls.map(([method, ...args]) => store[method](...args));
  const full = expected[calls.findIndex(([m, a, o]) => m === 'getAuditMessagesForAgent' && a === 'a1' && o.max_messages === 100)];
  assert.equal(full.length, 100, 'the data has full pages');
  for (let i = 0; i < calls.length; i++) {
    assert.equal(JSON.stringify(actual[i]), JSON.stringify(expected[i]), `call ${i}: ${JSON.stringify(calls[i])}`);
  }
});

test('a store call inside db.transaction defers the conversion to its commit', (t) => {
  const store = createStore(join(tempDir(t), 'hub.db'));
  t.after(() => store.close());
  const db = store.db;
  db.transaction(() => {
    for (let i = 1; i <= THRESHOLD + 1; i++) logMessage(store, i);
    // Never inside the caller's transaction: a rollback would undo the indexes with it.
    assert.equal(largeIndexes(db), false);
  })();
  assert.equal(largeIndexes(db), true, 'converted when the transaction committed');
  assert.equal(store.getAuditStats().total_messages, THRESHOLD + 1);
  // A rolled-back transaction leaves nothing to convert on a small log.
  const small = createStore(join(tempDir(t), 'small.db'));
  t.after(() => small.close());
  assert.throws(() =>
    small.db.transaction(() => {
      for (let i = 1; i <= THRESHOLD; i++) logMessage(small, i);
      throw new Error('rolled back');
    })(),
  );
  logMessage(small, 1);
  assert.equal(largeIndexes(small.db), false);
  assert.equal(small.getHubStats().total_messages, 1);
});

test('rows written through store.db alone convert at the next per-tick read', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  const insert = db.prepare(
    "INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, status) VALUES (?, 'event', 'a', 'b', 't', 5, 1, ?, ?, 'c', 't', 'acked')",
  );
  db.transaction(() => {
    for (let i = 0; i < THRESHOLD; i++) insert.run(`raw-${i}`, i, i + 1);
  })();
  assert.equal(largeIndexes(db), false, 'raw SQL is not a store call');
  assert.equal(store.getAuditMessagesForAgent('b', { max_messages: 3 }).length, 3);
  assert.equal(largeIndexes(db), true, 'the per-tick read converted');
  // Another connection's rows are seen the same way.
  const otherPath = join(tempDir(t), 'other.db');
  const hub = createStore(otherPath);
  t.after(() => hub.close());
  const writer = new Database(otherPath);
  writer.transaction(() => {
    const put = writer.prepare(insert.source);
    for (let i = 0; i < THRESHOLD; i++) put.run(`other-${i}`, i, i + 1);
  })();
  writer.close();
  assert.equal(hub.getHubStats().total_messages, THRESHOLD);
  assert.equal(largeIndexes(hub.db), true, 'a commit by another connection, then a read here');
});

test('a conversion that cannot take the write lock changes nothing of the call and is retried', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  const insert = db.prepare(
    "INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, status) VALUES (?, 'event', 'a', 'b', 't', 5, 1, ?, ?, 'c', 't', 'queued')",
  );
  db.transaction(() => {
    for (let i = 0; i < THRESHOLD; i++) insert.run(`raw-${i}`, i, i + 1);
  })();
  db.pragma('busy_timeout = 20');
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  const stats = store.getHubStats();
  assert.equal(stats.total_messages, THRESHOLD);
  assert.equal(stats.urgent + stats.normal, THRESHOLD);
  assert.equal(largeIndexes(db), false);
  other.exec('COMMIT');
  other.close();
  logMessage(store, 7);
  assert.equal(largeIndexes(db), true, 'the next insert past the threshold converted');
  assert.equal(store.getHubStats().total_messages, THRESHOLD + 1);
});
