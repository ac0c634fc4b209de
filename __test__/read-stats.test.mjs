// The package's entries for looking at a hub file from outside the hub: readStats (the
// store's four statistics, read-only, one read transaction) and Database's immutable open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { createStore, Database, readStats } from '../index.mjs';
import { fixtureCopy, tempDir, thrown } from './helpers.mjs';

test("readStats gives the store's four statistics and leaves the file as it was", (t) => {
  const path = fixtureCopy(t, 'hub-v6.db');
  const stats = readStats(path, { timeout: 100 });
  const store = createStore(fixtureCopy(t, 'hub-v6.db'));
  try {
    assert.equal(
      JSON.stringify(stats),
      JSON.stringify({ hub: store.getHubStats(), audit: store.getAuditStats(), queue_depths: store.getQueueDepths(), delivery: store.getDeliveryStats() }),
    );
  } finally {
    store.close();
  }
  assert.deepEqual(readStats(path, { immutable: true }), stats);
  assert.deepEqual(readdirSync(dirname(path)).sort(), ['hub.db', 'hub.db-shm', 'hub.db-wal'], 'a read-only open: no other file, nothing migrated');
});

test('readStats and the immutable option refuse bad arguments with a TypeError', (t) => {
  const path = fixtureCopy(t, 'hub-v6.db');
  assert.equal(thrown(() => readStats(42)).message, 'Expected first argument to be a string');
  assert.equal(thrown(() => readStats(path, { timeout: -1 })).message, 'Expected the "timeout" option to be a positive integer');
  assert.equal(thrown(() => readStats(path, { immutable: 'yes' })).message, 'Expected the "immutable" option to be a boolean');
  assert.equal(thrown(() => readStats(join(tempDir(t), 'missing.db'))).code, 'SQLITE_CANTOPEN');
  assert.equal(thrown(() => new Database(path, { immutable: true })).message, 'The "immutable" option requires "readonly"');
  assert.equal(thrown(() => new Database(path, { readonly: true, immutable: 1 })).message, 'Expected the "immutable" option to be a boolean');
});

test('an immutable connection reads the file as it is on disk: not the -wal, and takes no lock', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const writer = new Database(path);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1);');
  writer.pragma('wal_checkpoint(TRUNCATE)');
  writer.exec('INSERT INTO t VALUES (2)'); // in the -wal only
  const immutable = new Database(path, { readonly: true, immutable: true });
  const shared = new Database(path, { readonly: true });
  try {
    assert.deepEqual(immutable.prepare('SELECT x FROM t').pluck().all(), [1]);
    assert.deepEqual(shared.prepare('SELECT x FROM t').pluck().all(), [1, 2]);
  } finally {
    immutable.close();
    shared.close();
    writer.close();
  }
  // A connection that keeps the file locked for itself shuts out a shared reader, not an immutable one.
  const owner = new Database(path);
  owner.pragma('locking_mode = EXCLUSIVE');
  owner.exec('INSERT INTO t VALUES (3)');
  try {
    const locked = new Database(path, { readonly: true, timeout: 0 });
    assert.equal(thrown(() => locked.prepare('SELECT COUNT(*) FROM t').get()).code, 'SQLITE_BUSY');
    locked.close();
    const reader = new Database(path, { readonly: true, immutable: true, timeout: 0 });
    assert.ok(reader.prepare('SELECT COUNT(*) FROM t').pluck().get() >= 1);
    reader.close();
  } finally {
    owner.close();
  }
});
