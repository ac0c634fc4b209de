// Per-tick reads served by the large-log indexes must give the original's results, ties included.
// The reference is better-sqlite3 running the original store's statements
// (bench/original-tick.mjs) in a child process, on a copy of the same file.

import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Database, createStore } from '../index.mjs';
import { referenceSkip, tempDir } from './helpers.mjs';
import { runOriginal as original, SCHEMA_SQL, tickCalls, tieRows } from './fixtures/tie-log.mjs';

for (const [label, count, large] of [
  ['a small log (the original statements)', 4_000, false],
  ['a large log (the large-log indexes and rewritten statements)', 12_000, true],
]) {
  test(`ties on created_at_ms come back in the original order, ${label}`, { skip: referenceSkip }, (t) => {
    const dir = tempDir(t);
    const now = Date.now();
    const theirs = join(dir, 'original.db');
    const ours = join(dir, 'native.db');
    original({ db: theirs, schemaSql: SCHEMA_SQL, rows: tieRows(now, count) });
    copyFileSync(theirs, ours);
    const calls = tickCalls(now);

    const store = createStore(ours);
    t.after(() => store.close());
    const indexes = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' ORDER BY name").pluck().all();
    assert.equal(indexes.includes('idx_messages_to_agent_recent'), large, indexes.join());
    assert.equal(indexes.includes('idx_messages_to_agent'), !large, indexes.join());
    // sweepExpired stamps failed_at_ms with its own clock: only that it is recent is compared.
    const stamp = (results) =>
      results.map((r, i) =>
        calls[i][0] === 'getDeadLetters' ? r.map((d) => ({ ...d, failed_at_ms: d.failed_at_ms >= now ? 'swept' : d.failed_at_ms })) : r,
      );
    const expected = stamp(original({ db: theirs, calls }));
    const actual = stamp(calls.map(([method, ...args]) => store[method](...args)));
    // A guard that the data has what the test is about: full pages of equal timestamps.
    const first = expected[calls.findIndex(([m, a, o]) => m === 'pollForAgent' && a === 'a1' && o.max_messages === 100)];
    assert.equal(first.length, 100);
    assert.equal(new Set(first.map((r) => r.created_at_ms)).size, 1);
    assert.ok(expected[calls.findIndex(([m]) => m === 'sweepExpired')].messages >= count / 15);
    for (let i = 0; i < calls.length; i++) {
      assert.deepEqual(actual[i], expected[i], `call ${i}: ${JSON.stringify(calls[i])}`);
      assert.equal(JSON.stringify(actual[i]), JSON.stringify(expected[i]), `key order, call ${i}`);
    }
  });
}

for (const base of [0, 10_000]) {
test(`message and dead-letter counts stay exact through raw writes, replaces, deletes and other connections (${base ? 'large' : 'small'} log)`, (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  if (base) {
    db.transaction(() => {
      for (let i = 0; i < base; i++) store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
    })();
    store.sweepExpired(); // the sweep that sees the log this large adds the large-log indexes
  }
  const large = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'idx_messages_to_agent_recent'").pluck().get();
  assert.equal(large, base ? 1 : 0);
  const truth = () => ({
    total: db.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
    dlq: db.prepare('SELECT COUNT(*) FROM dead_letters').pluck().get(),
  });
  const counted = () => {
    const s = store.getHubStats();
    assert.equal(store.getAuditStats().total_messages, s.total_messages);
    assert.equal(store.getQueueDepths().dlq, s.dlq);
    return { total: s.total_messages, dlq: s.dlq };
  };
  const ids = [];
  for (let i = 0; i < 30; i++) ids.push(store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' }).id);
  assert.deepEqual(counted(), { total: base + 30, dlq: 0 });
  store.moveToDeadLetter(ids[0], 'r1');
  store.moveToDeadLetter(ids[0], 'r2'); // INSERT OR REPLACE of the same key
  store.moveToDeadLetter('no-such-message', 'r3');
  assert.deepEqual(counted(), truth());
  assert.deepEqual(counted(), { total: base + 30, dlq: 2 });
  db.prepare('DELETE FROM messages WHERE id IN (?, ?)').run(ids[1], ids[2]);
  db.prepare('DELETE FROM dead_letters WHERE message_id = ?').run('no-such-message');
  assert.throws(() => store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 12 }), /CHECK constraint failed/);
  db.transaction(() => {
    store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
    db.prepare("INSERT OR IGNORE INTO dead_letters (message_id, reason, failed_at_ms) VALUES (?, 'x', 1)").run(ids[0]);
  })();
  assert.throws(() =>
    db.transaction(() => {
      store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
      throw new Error('rolled back');
    })(),
  );
  assert.deepEqual(counted(), truth());
  assert.deepEqual(counted(), { total: base + 29, dlq: 1 });
  // Another connection's commits (its writes fire no trigger here) are recounted.
  const other = new Database(path);
  other.prepare("INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, status) VALUES ('x1', 'event', 'a', 'b', 't', 5, 1, 1, 2, 'c', 't', 'queued')").run();
  other.prepare('DELETE FROM dead_letters').run();
  other.close();
  assert.deepEqual(counted(), { total: base + 30, dlq: 0 });
  assert.deepEqual(counted(), truth());
  // Changing temp_store empties the temp schema (the counters with it): they come back.
  db.pragma('temp_store = MEMORY');
  store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
  assert.deepEqual(counted(), { total: base + 31, dlq: 0 });
  store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
  assert.deepEqual(counted(), truth());
});
}

test('the WAL returns to journal_size_limit once no reader pins it', async (t) => {
  const { statSync } = await import('node:fs');
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  // The policy's knob: set at open, changeable per connection.
  assert.equal(store.db.pragma('journal_size_limit', { simple: true }), 16 * 1024 * 1024);
  store.db.pragma('journal_size_limit = 1048576');
  const wal = () => statSync(`${path}-wal`).size;
  const log = (i) => store.auditLog({ type: 'event', from: 'a', to: `b${i % 7}`, topic: 't', payload: { i } });
  log(0);
  const reader = new Database(path);
  reader.exec('BEGIN');
  assert.equal(reader.prepare('SELECT COUNT(*) FROM messages').pluck().get(), 1);
  for (let i = 0; i < 300; i++) log(i);
  const pinned = wal();
  assert.ok(pinned > 2 * 1048576, `pinned WAL ${pinned}`);
  reader.exec('COMMIT');
  reader.close();
  // The store's background checkpointer restarts the WAL (a WAL over journal_size_limit
  // is restarted) and truncates it, within moments of the reader leaving.
  let writes = 0;
  for (const until = Date.now() + 5000; wal() > 1048576 && Date.now() < until; writes++) {
    log(writes);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(wal() <= 1048576, `WAL after the reader left: ${wal()}`);
  assert.equal(store.getHubStats().total_messages, 301 + writes);
});

test('statements prepared from the same source text share nothing observable', (t) => {
  const store = createStore(join(tempDir(t), 'hub.db'));
  t.after(() => store.close());
  const db = store.db;
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)');
  const put = db.prepare('INSERT INTO kv VALUES (?, ?)');
  for (let i = 0; i < 5; i++) put.run(`k${i}`, i);
  const SQL = 'SELECT k, v FROM kv WHERE v >= ? ORDER BY v';
  const a = db.prepare(SQL);
  const b = db.prepare(SQL).pluck();
  const c = db.prepare(SQL).raw();
  assert.deepEqual(a.get(3), { k: 'k3', v: 3 });
  assert.equal(b.get(3), 'k3');
  assert.deepEqual(c.get(3), ['k3', 3]);
  // bind() on one: permanent for it only.
  const bound = db.prepare(SQL).bind(4);
  assert.deepEqual(bound.all(), [{ k: 'k4', v: 4 }]);
  assert.throws(() => bound.get(1), /already has bound parameters/);
  assert.deepEqual(a.all(4), [{ k: 'k4', v: 4 }]);
  assert.equal(db.prepare(SQL).get(2).k, 'k2');
  // An open iterator on one while another with the same source runs.
  const it = db.prepare(SQL).iterate(0);
  assert.deepEqual(it.next().value, { k: 'k0', v: 0 });
  assert.equal(b.get(1), 'k1');
  assert.deepEqual(a.all(3), [{ k: 'k3', v: 3 }, { k: 'k4', v: 4 }]);
  assert.deepEqual(it.next().value, { k: 'k1', v: 1 });
  it.return();
  // Interleaved with its own iterator, the same statement object is busy, as in better-sqlite3.
  const it2 = a.iterate(0);
  assert.throws(() => a.get(0), /busy/);
  it2.return();
  assert.deepEqual(a.get(4), { k: 'k4', v: 4 });
  // A schema change reaches a statement prepared before it.
  const all = db.prepare('SELECT * FROM kv WHERE k = ?');
  assert.deepEqual(all.get('k1'), { k: 'k1', v: 1 });
  db.exec('ALTER TABLE kv ADD COLUMN w TEXT');
  assert.deepEqual(db.prepare('SELECT * FROM kv WHERE k = ?').get('k1'), { k: 'k1', v: 1, w: null });
  assert.deepEqual(all.get('k1'), { k: 'k1', v: 1, w: null });
  // Thousands of prepares of one source, each used once: same results throughout.
  let sum = 0;
  for (let i = 0; i < 5000; i++) sum += db.prepare('SELECT v FROM kv WHERE k = ?').pluck().get(`k${i % 5}`);
  assert.equal(sum, 10000);
  // A closed connection prepares nothing, cached source or not.
  store.close();
  assert.throws(() => db.prepare(SQL), { name: 'TypeError', message: 'The database connection is not open' });
});
