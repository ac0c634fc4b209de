// Behaviours a new user met where this package disagreed with the original store or
// with JS itself: each asserts the original's (or better-sqlite3's) result. Numbered as
// they were first listed; 10 (a panic inside a nested store method) is covered by the
// transaction guard's Rust tests.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import test from 'node:test';

import { createStore, Database } from '../index.mjs';
import { tempDir, thrown } from './helpers.mjs';

function open(t) {
  const dir = tempDir(t);
  const store = createStore(join(dir, 'hub.db'));
  t.after(() => store.close());
  return { store, dir };
}

const job = (extra = {}) => ({ supervisor_agent: 's', worker_agent: 'w', task: 't', ...extra });

test('1: rows whose text holds a lone surrogate go through read-modify-write', (t) => {
  const { store } = open(t);
  const cut = 'fix 😀'.slice(0, 5); // ends inside the emoji
  const j = store.createAssign(job({ task: cut }));
  assert.equal(store.updateAssignStatus(j.job_id, 'running').status, 'running');
  assert.equal(store.retryAssign(j.job_id).retry_count, 1);
  const r = store.addReflexion({ error_pattern: cut, error_message: cut, context: { k: cut }, solution: cut });
  assert.equal(store.updateReflexionHit(r.id, true).hit_count, 2);
  assert.equal(store.patchReflexion(r.id, { solution: 'ok' }).solution, 'ok');
});

test('2: BigInt arguments are read as their values (Number(x))', (t) => {
  const { store } = open(t);
  const j = store.createAssign(job({ priority: 7n, attempt: 3n, deadline_ms: 1234n }));
  assert.equal(j.priority, 7);
  assert.equal(j.attempt, 3);
  assert.equal(j.deadline_ms, 1234);
  store.createAssign(job());
  store.createAssign(job());
  assert.equal(store.listAssigns({ limit: 2n }).length, 2);
  store.registerAgent({ agent_id: 'a', cli: 'codex' });
  assert.deepEqual(store.pollForAgent('a', { max_messages: 5n }), []);
});

test('3: now + x applies ToPrimitive like JS `+`', (t) => {
  const { store } = open(t);
  store.registerAgent({ agent_id: 'a', cli: 'codex' });
  const before = Date.now();
  const out = store.refreshLease('a', new Number(30000));
  assert.equal(typeof out.lease_expires_ms, 'number');
  assert.ok(out.lease_expires_ms >= before + 30000 && out.lease_expires_ms <= Date.now() + 30000);
  assert.equal(store.getAgent('a').lease_expires_ms, out.lease_expires_ms);
  const valueOf = () => {
    throw new Error('valueOf says no');
  };
  assert.equal(thrown(() => store.refreshLease('a', { valueOf })).message, 'valueOf says no');
  assert.equal(thrown(() => store.registerAgent({ agent_id: 'b', cli: 'codex', heartbeat_ttl_ms: { valueOf } })).message, 'valueOf says no');
  const req = store.insertHumanRequest({ requester_agent: 'a', kind: 'approval', prompt: 'p', deadline_ms: new Number(5), default_action: 'decline' });
  assert.equal(typeof req.deadline_ms, 'number');
  const symbol = thrown(() => store.refreshLease('a', Symbol('s')));
  assert.equal(symbol.name, 'TypeError');
  assert.equal(symbol.message, 'Cannot convert a Symbol value to a number');
});

test('4: caller callbacks may call the store', (t) => {
  const { store } = open(t);
  const j = store.createAssign(job({ payload: { toJSON: () => store.getHubStats() } }));
  assert.equal(j.payload.active_assign_jobs, 0);
  const r = store.addReflexion({ error_pattern: 'p', error_message: 'm', context: { toJSON: () => ({ jobs: store.listAssigns().length }) }, solution: 's' });
  assert.deepEqual(r.context, { jobs: 1 });
  // Closing from inside a call is refused; the store stays usable.
  const closing = thrown(() => store.createAssign(job({ payload: { toJSON: () => store.close() } })));
  assert.equal(closing.message, 'This database connection is busy executing a query');
  assert.equal(store.getAssign(j.job_id).job_id, j.job_id);
});

test('5: a Symbol topic is stored as String(symbol)', (t) => {
  const { store } = open(t);
  assert.equal(store.createAssign(job({ topic: Symbol('x') })).topic, 'Symbol(x)');
});

test('6: several bad arguments fail with the original first error', (t) => {
  const { store } = open(t);
  const metadata = {
    toJSON() {
      throw new Error('toJSON first?');
    },
  };
  const e = thrown(() => store.registerAgent({ agent_id: 'a', cli: 'codex', heartbeat_ttl_ms: 5n, metadata }));
  assert.equal(e.name, 'TypeError');
  assert.equal(e.message, 'Cannot mix BigInt and other types, use explicit conversions');
  const e2 = thrown(() => store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', ttl_ms: 1n, payload: metadata }));
  assert.equal(e2.message, 'Cannot mix BigInt and other types, use explicit conversions');
});

test('7: strings built from caller strings keep their code units', (t) => {
  const { store } = open(t);
  store.registerAgent({ agent_id: 'a', cli: 'codex' });
  const lone = '\ud83d';
  const out = store.refreshLease('a', lone);
  assert.equal(out.lease_expires_ms.slice(-1), lone);
  const reg = store.registerAgent({ agent_id: 'b', cli: 'codex', heartbeat_ttl_ms: lone });
  assert.equal(reg.lease_expires_ms.slice(-1), lone);
  assert.equal(reg.effective.online, false);
  const msg = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', ttl_ms: lone });
  assert.equal(msg.expires_at_ms.slice(-1), lone);
});

test('8: a broken v6 schema fails at open, as in the original', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'hub.db');
  createStore(file).close();
  const db = new Database(file);
  // A messages table that lost its status column (and the indexes on it).
  for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql LIKE '%status%'").all()) {
    db.exec(`DROP INDEX ${name}`);
  }
  db.exec('ALTER TABLE messages DROP COLUMN status');
  db.close();
  assert.equal(thrown(() => createStore(file)).message, 'no such column: status');
});

test('9: file: names are plain file names; a NUL in the path is refused', (t) => {
  const dir = tempDir(t);
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    if (process.platform === 'win32') {
      // ':' and '?' cannot be in a Windows file name: the plain name fails to open, and no
      // URI is read (that would have opened x.db).
      assert.equal(thrown(() => new Database('file:x.db?mode=ro')).code, 'SQLITE_CANTOPEN');
      assert.ok(!existsSync(join(dir, 'x.db')));
    } else {
      const db = new Database('file:x.db?mode=ro');
      db.exec('CREATE TABLE t (x)');
      db.close();
      assert.ok(existsSync(join(dir, 'file:x.db?mode=ro')));
    }
  } finally {
    process.chdir(cwd);
  }
  const e = thrown(() => new Database(join(dir, 'a\0b.db')));
  assert.equal(e.message, 'The database path must not contain NUL characters');
});

test('11: an iterator returned twice releases the connection once', (t) => {
  const { store } = open(t);
  const db = store.db;
  const connection = db[Object.getOwnPropertySymbols(db).find((s) => s.description === 'native')];
  const { facadeIterReturn } = createRequire(import.meta.url)('../lib/native.cjs');
  const stmt = db.prepare('SELECT 1 AS x UNION ALL SELECT 2');
  const it = stmt.iterate();
  it.next();
  it.return();
  // The internal handle lets a caller end the same iteration again.
  const id = 0;
  facadeIterReturn(connection.handle, id);
  facadeIterReturn(connection.handle, id);
  assert.equal(db.prepare('SELECT 3 AS x').get().x, 3);
  db.exec('CREATE TABLE t (x)');
  assert.equal(db.prepare('INSERT INTO t VALUES (1)').run().changes, 1);
});

test('12: typed arrays bind their own bytes, whatever their element size', (t) => {
  const { store } = open(t);
  const get = (v) => store.db.prepare('SELECT length(?) AS n').get(v).n;
  assert.equal(get(new Uint8Array(3)), 3);
  assert.equal(get(new Uint16Array(3)), 6);
  assert.equal(get(new Float32Array(3)), 12);
  assert.equal(get(new Float64Array(3)), 24);
  assert.equal(get(new BigInt64Array(3)), 24);
  assert.equal(get(new DataView(new ArrayBuffer(5))), 5);
});

test('13: run() reports each call its own lastInsertRowid', (t) => {
  const { store } = open(t);
  store.db.exec('CREATE TABLE t (x)');
  const insert = store.db.prepare('INSERT INTO t VALUES (?)');
  const results = [1, 2, 3].map((x) => insert.run(x));
  assert.deepEqual(
    results.map((r) => r.lastInsertRowid),
    [1, 2, 3],
  );
});
