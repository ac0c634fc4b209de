// Behaviours a new user met where this package disagreed with the original store or
// with JS itself: each asserts the original's (or better-sqlite3's) result. Numbered as
// in the issue that listed them; 10 (a panic inside a nested store method) is covered
// by the transaction guard's Rust tests.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
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
    const db = new Database('file:x.db?mode=ro');
    db.exec('CREATE TABLE t (x)');
    db.close();
    assert.ok(existsSync(join(dir, 'file:x.db?mode=ro')));
  } finally {
    process.chdir(cwd);
  }
  const e = thrown(() => new Database(join(dir, 'a\0b.db')));
  assert.equal(e.message, 'The database path must not contain NUL characters');
});

test('11: an iterator returned twice releases the connection once', (t) => {
  const { store } = open(t);
  const db = store.db;
  const native = db[Object.getOwnPropertySymbols(db).find((s) => s.description === 'native')];
  const stmt = db.prepare('SELECT 1 AS x UNION ALL SELECT 2');
  const it = stmt.iterate();
  it.next();
  it.return();
  // The internal handle lets a caller end the same iteration again.
  const id = 0;
  native.facadeIterReturn(id);
  native.facadeIterReturn(id);
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
