// The queue depths and assign-job counts of getHubStats, getQueueDepths and getAuditStats
// must equal a fresh COUNT(*) after every kind of write: store methods, raw SQL through
// store.db, rollbacks, status changes either way, priority changes, deletes,
// dead-lettering, replaces, another connection and another process. On a large log they
// come from the connection's counters (src/store/counters.sql); on a small one the
// original's statements run. The reference is better-sqlite3 running the original's
// statements (bench/original-tick.mjs) in a child process, on the same file.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import test from 'node:test';
import { Database, createStore } from '../index.mjs';
import { referenceSkip, repoRoot, sqlInChild, tempDir } from './helpers.mjs';

const CHILD = join(repoRoot, '__test__', 'fixtures', 'original-tick-child.mjs');
const THRESHOLD = 10_000;
const STATS = [['getHubStats'], ['getQueueDepths'], ['getAuditStats']];

// The original's statements (the v6 spec's getHubStats/getQueueDepths/getAuditStats, as in
// bench/original-tick.mjs).
const ORIGINAL_SQL = {
  online_agents: "SELECT COUNT(*) as cnt FROM agents WHERE status='online'",
  total_messages: 'SELECT COUNT(*) as cnt FROM messages',
  active_assign_jobs: "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status IN ('queued','running')",
  urgent: "SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority >= 7",
  normal: "SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority < 7",
  dlq: 'SELECT COUNT(*) as cnt FROM dead_letters',
  assign_queued: "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = 'queued'",
  assign_running: "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = 'running'",
  assign_failed: "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = 'failed'",
  assign_timed_out: "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = 'timed_out'",
};

const INSERT_MESSAGE = `INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms,
  expires_at_ms, correlation_id, trace_id, payload_json, status) VALUES (?, 'event', 'a', 'b', 't', ?, 60000, 1, ?, 'c', 't', '{}', ?)`;
const INSERT_JOB = `INSERT INTO assign_jobs (job_id, supervisor_agent, worker_agent, status, trace_id, correlation_id,
  created_at_ms, updated_at_ms) VALUES (?, 's', 'w', ?, 't', 'c', 1, 1)`;

/** Fresh counts on the store's own connection, with the original's statements. */
function fresh(db) {
  const c = (key) => db.prepare(ORIGINAL_SQL[key]).get().cnt;
  const pick = (keys) => Object.fromEntries(keys.map((k) => [k, c(k)]));
  return [
    pick(['online_agents', 'total_messages', 'active_assign_jobs', 'urgent', 'normal', 'dlq']),
    pick(['urgent', 'normal', 'dlq']),
    pick(['online_agents', 'total_messages', 'dlq', 'assign_queued', 'assign_running', 'assign_failed', 'assign_timed_out']),
  ];
}

const ours = (store) => STATS.map(([m]) => store[m]());

function original(path) {
  const r = spawnSync(process.execPath, [CHILD], { input: JSON.stringify({ db: path, calls: STATS }), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * A log of `n` messages written with raw SQL (statuses and priorities mixed, about 40%
 * queued) and `n / 10` assign jobs of every status; a store call then finds it large.
 */
function bulk(db, n) {
  db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n})
    INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms,
      correlation_id, trace_id, payload_json, status)
    SELECT 'bulk-' || i, 'event', 'a', 'agent-' || (i % 50), 't', 1 + (i * 7) % 9, 60000, i, 4102444800000, 'c', 't', '{}',
      CASE i % 5 WHEN 0 THEN 'acked' WHEN 1 THEN 'delivered' WHEN 2 THEN 'dead_letter' ELSE 'queued' END FROM s`);
  db.exec(`INSERT INTO dead_letters (message_id, reason, failed_at_ms) SELECT id, 'x', 1 FROM messages WHERE status = 'dead_letter'`);
  db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${Math.floor(n / 10)})
    INSERT INTO assign_jobs (job_id, supervisor_agent, worker_agent, status, trace_id, correlation_id, created_at_ms, updated_at_ms)
    SELECT 'bulk-job-' || i, 's', 'w', CASE i % 5 WHEN 0 THEN 'succeeded' WHEN 1 THEN 'failed' WHEN 2 THEN 'timed_out'
      WHEN 3 THEN 'running' ELSE 'queued' END, 't', 'c', 1, 1 FROM s`);
}

const isLarge = (db) =>
  db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'idx_messages_to_agent_recent'").pluck().get() === 1;
const counting = (db) => db.prepare("SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'store_counts'").pluck().get() === 1;

function setup(t, large) {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  store.registerAgent({ agent_id: 'online-1', cli: 'codex' });
  bulk(db, large ? THRESHOLD + 500 : 2_000);
  store.getHubStats(); // a per-tick read that finds the log grown converts it
  assert.equal(isLarge(db), large);
  const check = (what) => {
    const actual = ours(store);
    assert.deepEqual(actual, fresh(db), what);
    assert.equal(counting(db), large, `${what}: counters ${large ? '' : 'not '}in use`);
    return actual;
  };
  return { path, store, db, check };
}

for (const large of [false, true]) {
  const label = large ? 'a large log (counters)' : 'a small log (the original statements)';

  test(`queue depths follow store writes, raw SQL, rollbacks and deletes, ${label}`, { skip: referenceSkip }, (t) => {
    const { path, store, db, check } = setup(t, large);
    const before = check('after the bulk');
    assert.ok(before[1].urgent > 0 && before[1].normal > 0, 'both classes are queued');
    assert.deepEqual(original(path), before, 'better-sqlite3 with the original statements');

    const log = (priority, status = 'queued', ttl_ms = 3_600_000) =>
      store.auditLog({ type: 'event', from: 'a', to: 'nobody', topic: 't', priority, status, ttl_ms }).id;
    const u = [log(9), log(7), log(8)];
    const n = [log(1), log(6), log(5)];
    log(8, 'delivered');
    log(2, 'acked');
    let c = check('auditLog, queued and not');
    assert.equal(c[1].urgent, before[1].urgent + 3);
    assert.equal(c[1].normal, before[1].normal + 3);

    store.updateMessageStatus(u[0], 'delivered');
    store.updateMessageStatus(n[0], 'acked');
    check('queued to delivered/acked');
    store.updateMessageStatus(u[0], 'queued');
    db.prepare("UPDATE messages SET status = 'queued' WHERE id = ?").run(n[0]);
    check('back to queued (store and raw)');
    db.prepare('UPDATE messages SET priority = 3 WHERE id = ?').run(u[1]); // urgent -> normal
    db.prepare('UPDATE messages SET priority = 7 WHERE id = ?').run(n[1]); // normal -> urgent
    db.prepare("UPDATE messages SET priority = 9, status = 'delivered' WHERE id = ?").run(n[2]);
    db.prepare('UPDATE messages SET payload_json = ? WHERE id = ?').run('{"x":1}', u[2]);
    c = check('priority changes');
    db.prepare("UPDATE messages SET status = 'acked' WHERE rowid % 11 = 0 AND status = 'queued'").run();
    db.prepare("UPDATE messages SET status = 'queued', priority = 8 WHERE rowid % 13 = 0 AND status = 'delivered'").run();
    check('bulk status changes both ways');

    store.moveToDeadLetter(u[2], 'r1');
    store.moveToDeadLetter(u[2], 'r2'); // INSERT OR REPLACE of the same dead letter
    log(4, 'queued', -1);
    log(8, 'queued', -1);
    const swept = store.sweepExpired();
    assert.ok(swept.messages >= 2);
    check('dead-lettering and sweepExpired');

    db.prepare('DELETE FROM messages WHERE id IN (?, ?)').run(u[0], n[0]);
    db.prepare("DELETE FROM messages WHERE rowid % 17 = 0 AND status = 'queued'").run();
    db.prepare("DELETE FROM dead_letters WHERE message_id = ?").run(u[2]);
    check('deletes');

    c = check('before the rollbacks');
    assert.throws(() =>
      db.transaction(() => {
        log(9);
        log(1);
        store.updateMessageStatus(n[1], 'delivered');
        db.prepare('UPDATE messages SET priority = 1 WHERE id = ?').run(u[1]);
        db.prepare("DELETE FROM messages WHERE status = 'queued' AND rowid % 3 = 0").run();
        assert.deepEqual(ours(store), fresh(db), 'inside the transaction');
        throw new Error('rolled back');
      })(),
    );
    assert.deepEqual(check('after a rollback'), c);
    db.transaction(() => {
      log(9);
      try {
        db.transaction(() => {
          log(8);
          store.updateMessageStatus(n[1], 'acked');
          throw new Error('savepoint rolled back');
        })();
      } catch {}
      log(2);
    })();
    c = check('after a savepoint rollback');
    assert.equal(c[1].urgent + c[1].normal, c[0].urgent + c[0].normal);
    assert.deepEqual(original(path), c, 'better-sqlite3 with the original statements, at the end');
  });

  test(`assign-job counts follow every status change, ${label}`, { skip: referenceSkip }, (t) => {
    const { path, store, db, check } = setup(t, large);
    check('after the bulk');
    const job = (status) => store.createAssign({ supervisor_agent: 's', worker_agent: 'w', status }).job_id;
    const a = job('queued');
    const b = job('running');
    job('failed');
    job('timed_out');
    job('succeeded');
    check('createAssign of each status');
    store.updateAssignStatus(a, 'running');
    store.updateAssignStatus(b, 'failed');
    check('queued -> running -> failed');
    store.retryAssign(b);
    store.updateAssignStatus(a, 'timed_out');
    let c = check('retryAssign (failed -> queued), running -> timed_out');
    store.updateAssignStatus(a, 'succeeded');
    assert.equal(check('timed_out -> succeeded')[2].assign_timed_out, c[2].assign_timed_out - 1);
    db.prepare("UPDATE assign_jobs SET status = 'running' WHERE rowid % 7 = 0 AND status <> 'running'").run();
    db.prepare("UPDATE assign_jobs SET status = 'queued' WHERE rowid % 9 = 0").run();
    check('raw status updates');
    db.prepare("DELETE FROM assign_jobs WHERE rowid % 5 = 0").run();
    db.prepare('DELETE FROM assign_jobs WHERE job_id = ?').run(b);
    check('deletes');
    c = check('before a rollback');
    assert.throws(() =>
      db.transaction(() => {
        job('queued');
        store.updateAssignStatus(a, 'queued');
        db.prepare("UPDATE assign_jobs SET status = 'failed' WHERE status = 'running'").run();
        throw new Error('rolled back');
      })(),
    );
    assert.deepEqual(check('after a rollback'), c);
    assert.deepEqual(original(path), c, 'better-sqlite3 with the original statements');
  });

  test(`replaces, ignored inserts, upserts and re-keyed rows keep the counts exact, ${label}`, { skip: referenceSkip }, (t) => {
    const { path, store, db, check } = setup(t, large);
    const q = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 8 }).id;
    const q2 = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 2 }).id;
    check('two queued');
    // The implicit delete of a REPLACE fires no trigger.
    db.prepare(INSERT_MESSAGE.replace('INSERT', 'INSERT OR REPLACE')).run(q, 3, 2, 'acked');
    check('REPLACE of a queued message by an acked one');
    db.prepare(INSERT_MESSAGE.replace('INSERT', 'INSERT OR IGNORE')).run(q2, 9, 2, 'queued');
    db.prepare(INSERT_MESSAGE.replace('INSERT', 'INSERT OR IGNORE')).run('fresh-1', 9, 2, 'queued');
    check('ignored and inserted');
    db.prepare(`${INSERT_MESSAGE} ON CONFLICT(id) DO UPDATE SET status = excluded.status, priority = excluded.priority`)
      .run(q2, 9, 2, 'delivered');
    check('upsert');
    const rowid = db.prepare('SELECT rowid FROM messages WHERE id = ?').pluck().get('fresh-1');
    db.prepare("UPDATE OR REPLACE messages SET rowid = ? WHERE id = 'bulk-4'").run(rowid);
    db.prepare("UPDATE OR REPLACE messages SET id = 'bulk-8' WHERE id = 'bulk-9'").run();
    check('re-keyed rows replacing others');
    store.createAssign({ job_id: 'j1', supervisor_agent: 's', worker_agent: 'w', status: 'running' });
    db.prepare(INSERT_JOB.replace('INSERT', 'INSERT OR REPLACE')).run('j1', 'queued');
    db.prepare(INSERT_JOB.replace('INSERT', 'INSERT OR REPLACE')).run('bulk-job-2', 'failed');
    db.prepare("UPDATE OR REPLACE assign_jobs SET job_id = 'bulk-job-4' WHERE job_id = 'bulk-job-3'").run();
    check('assign job replaces');
    db.prepare("INSERT OR REPLACE INTO dead_letters (message_id, reason, failed_at_ms) VALUES ('bulk-3', 'y', 2)").run();
    db.prepare("INSERT OR IGNORE INTO dead_letters (message_id, reason, failed_at_ms) VALUES ('bulk-3', 'z', 2)").run();
    const c = check('dead-letter replace and ignore');
    assert.deepEqual(original(path), c, 'better-sqlite3 with the original statements');
  });

  test(`writes of another connection and another process are counted, ${label}`, { skip: referenceSkip }, (t) => {
    const { path, store, db, check } = setup(t, large);
    check('after the bulk');
    const other = new Database(path);
    other.prepare(INSERT_MESSAGE).run('other-1', 8, 4102444800000, 'queued');
    other.prepare("UPDATE messages SET status = 'delivered' WHERE rowid % 19 = 0 AND status = 'queued'").run();
    other.prepare(INSERT_JOB).run('other-job', 'running');
    other.prepare("UPDATE assign_jobs SET status = 'timed_out' WHERE status = 'queued' AND rowid % 3 = 0").run();
    let c = check('another connection of this package');
    // A write of this connection after it, then another connection's in the same file.
    store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 9 });
    other.prepare('DELETE FROM messages WHERE id = ?').run('other-1');
    other.close();
    check('own write, then another connection');
    sqlInChild(path, INSERT_MESSAGE, ['child-1', 7, 4102444800000, 'queued']);
    sqlInChild(path, "UPDATE assign_jobs SET status = 'failed' WHERE job_id = ?", ['other-job']);
    c = check('another process');
    assert.deepEqual(original(path), c, 'better-sqlite3 with the original statements');
    // A rolled-back transaction that recounted (another process wrote just before) takes
    // the recount back with it; the next call counts again.
    sqlInChild(path, "UPDATE messages SET status = 'acked' WHERE id = ?", ['child-1']);
    assert.throws(() =>
      db.transaction(() => {
        store.getHubStats();
        store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 9 });
        throw new Error('rolled back');
      })(),
    );
    c = check('a recount rolled back');
    assert.equal(c[1].urgent, fresh(db)[1].urgent);
    // Changing temp_store empties the temp schema, counters included: they come back.
    db.pragma('temp_store = MEMORY');
    store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 1 });
    check('after temp_store changed');
  });
}

test('another writer costs one recount, not one per call', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  bulk(db, THRESHOLD + 100);
  store.getQueueDepths();
  assert.equal(isLarge(db), true);
  const counts = () => db.prepare('SELECT urgent, assign_running FROM temp.store_counts').get();
  const other = new Database(path);
  other.prepare(INSERT_MESSAGE).run('other-1', 8, 4102444800000, 'queued');
  other.close();
  const first = store.getQueueDepths();
  assert.equal(first.urgent, fresh(db)[1].urgent);
  // Counted once: a mark put on the counters (not a write the triggers see) survives the
  // next calls, which read the counters instead of counting again.
  db.exec('UPDATE temp.store_counts SET urgent = urgent + 1000');
  const marked = counts();
  assert.equal(store.getQueueDepths().urgent, first.urgent + 1000);
  assert.equal(store.getHubStats().urgent, first.urgent + 1000);
  assert.deepEqual(counts(), marked);
  // The next commit of another connection recounts, which drops the mark.
  const again = new Database(path);
  again.prepare("UPDATE assign_jobs SET status = 'running' WHERE rowid = 1").run();
  again.close();
  assert.deepEqual(ours(store), fresh(db));
});
