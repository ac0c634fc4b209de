// `triflux-native-store/better-sqlite3`: better-sqlite3's module shape on this package's
// Database, so hub/bridge.mjs, hooks/pipeline-stop.mjs and keyword-rules-expander can
// import it instead of better-sqlite3; and the SQLite options that module promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database, { SqliteError } from 'triflux-native-store/better-sqlite3';
import * as main from 'triflux-native-store';
import { createStore } from '../index.mjs';
import { BetterSqlite3, referenceSkip, repoRoot, secondConnection, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('module shape: CJS module.exports is the Database class with SqliteError on it, ESM default is the same', () => {
  const cjs = require('triflux-native-store/better-sqlite3');
  const original = BetterSqlite3 ?? require('better-sqlite3');
  assert.equal(typeof cjs, typeof original);
  assert.equal(typeof cjs.SqliteError, typeof original.SqliteError);
  assert.equal(cjs, main.Database);
  assert.equal(Database, cjs);
  assert.equal(SqliteError, main.SqliteError);
  assert.equal(Database.SqliteError, SqliteError);
  // Callable without `new`, as better-sqlite3 is.
  const db = Database(':memory:');
  assert.ok(db instanceof Database);
  db.close();
});

// Every module a process keeps is heap that each major GC marks again: with 32 KB BLOBs,
// the stores and node:crypto loaded beside the class cost a sixth more instructions per row.
test('the subpath loads the Database class alone: no store module, no node:crypto (nor does the root entry load crypto)', (t) => {
  // A file, not -e: Node's -e preloads node:crypto itself.
  const probe = join(tempDir(t), 'probe.cjs');
  writeFileSync(probe, `
    const entry = require(process.argv[2]);
    const Database = entry.Database ?? entry;
    new Database(':memory:').close();
    const loaded = Object.keys(require.cache).map((p) => p.split(require('node:path').sep).join('/'));
    console.log(JSON.stringify({
      stores: loaded.filter((p) => p.includes('/lib/store/')).length,
      crypto: process.moduleLoadList.includes('NativeModule crypto'),
    }));`);
  const run = (entry) => {
    const child = spawnSync(process.execPath, [probe, entry], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    return JSON.parse(child.stdout);
  };
  assert.deepEqual(run(require.resolve('triflux-native-store/better-sqlite3')), { stores: 0, crypto: false });
  // The root entry keeps its stores; crypto waits for the first schema-7 fingerprint.
  const root = run(require.resolve('triflux-native-store'));
  assert.ok(root.stores > 0);
  assert.equal(root.crypto, false);
});

// What hub/bridge.mjs does, from another process, while the hub's store holds the file.
const bridge = `
  import Database from 'triflux-native-store/better-sqlite3';
  const [path] = process.argv.slice(1);
  const ro = new Database(path, { readonly: true });
  const agent = ro.prepare('SELECT agent_id, status FROM agents WHERE agent_id = ?').get('a1');
  let readonlyWrite = null;
  try { ro.prepare("UPDATE agents SET status = 'offline'").run(); } catch (e) {
    readonlyWrite = { sqliteError: e instanceof Database.SqliteError, code: e.code };
  }
  ro.close();
  const rw = new Database(path);
  const changes = rw.prepare("UPDATE agents SET status = 'offline' WHERE agent_id = ?").run('a1').changes;
  const messages = rw.prepare('SELECT count(*) AS n FROM messages').pluck().get();
  rw.close();
  console.log(JSON.stringify({ agent, readonlyWrite, changes, messages }));
`;

test('a second process opens the store file through the subpath, read-only and read-write', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  store.registerAgent({ agent_id: 'a1', cli: 'codex' });
  store.auditLog({ type: 'event', from: 'a1', to: 'topic:t', topic: 't' });

  const child = spawnSync(process.execPath, ['--input-type=module', '-e', bridge, path], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout);
  assert.deepEqual(out.agent, { agent_id: 'a1', status: 'online' });
  assert.deepEqual(out.readonlyWrite, { sqliteError: true, code: 'SQLITE_READONLY' });
  assert.equal(out.changes, 1);
  assert.equal(out.messages, 1);
  // The store sees the other process's write.
  assert.equal(store.getAgent('a1').status, 'offline');
});

test('DELETE/UPDATE ... ORDER BY ... LIMIT work (SQLITE_ENABLE_UPDATE_DELETE_LIMIT, as in better-sqlite3)', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE q (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO q (v) VALUES (\'a\'), (\'b\'), (\'c\')');
  assert.equal(db.prepare('DELETE FROM q ORDER BY id DESC LIMIT 1').run().changes, 1);
  assert.equal(db.prepare("UPDATE q SET v = 'z' ORDER BY id LIMIT 1").run().changes, 1);
  assert.deepEqual(db.prepare('SELECT id, v FROM q ORDER BY id').raw().all(), [[1, 'z'], [2, 'b']]);
  db.close();
});

test('SQLite compile options are better-sqlite3 12\'s (build.rs compiles its list) plus the page-cache one', { skip: referenceSkip }, () => {
  const options = (rows) => rows.map((r) => r.compile_options).filter((o) => !o.startsWith('COMPILER='));
  const ours = options(new Database(':memory:').pragma('compile_options'));
  const theirs = options(sqlInBetterSqlite3('SELECT compile_options FROM pragma_compile_options'));
  // build.rs changes exactly one option (why: see there): the page cache's bulk block.
  const changed = (o) => o.startsWith('DEFAULT_PCACHE_INITSZ=');
  assert.deepEqual(ours.filter((o) => !changed(o)), theirs.filter((o) => !changed(o)));
  assert.deepEqual(ours.filter(changed), ['DEFAULT_PCACHE_INITSZ=0']);
  assert.deepEqual(theirs.filter(changed), ['DEFAULT_PCACHE_INITSZ=20']);
  for (const option of ['ENABLE_UPDATE_DELETE_LIMIT', 'OMIT_DEPRECATED', 'THREADSAFE=2', 'USE_URI']) {
    assert.ok(ours.includes(option), option);
  }
  const version = (db) => db.prepare('SELECT sqlite_version()').pluck().get();
  assert.equal(version(new Database(':memory:')), sqlInBetterSqlite3('SELECT sqlite_version() AS v')[0].v);
});

test('"file:" names are plain file names, as in better-sqlite3 (SQLITE_USE_URI=0)', { skip: referenceSkip }, (t) => {
  const uri = `file:${join(tempDir(t), 'uri.db')}?mode=rwc`;
  const error = (() => {
    try {
      new Database(uri).close();
    } catch (e) {
      return e;
    }
  })();
  assert.ok(error instanceof SqliteError, 'opening a URI name must fail');
  assert.equal(error.code, 'SQLITE_CANTOPEN');
  const theirs = spawnSync(process.execPath, ['-e', `try { new (require(${JSON.stringify(secondConnection)}))(process.argv[1]); } catch (e) { console.log(e.code); }`, uri], { encoding: 'utf8' });
  assert.equal(theirs.stdout.trim(), error.code);
});

// better-sqlite3 in a child process: two SQLite copies must not share one process.
function sqlInBetterSqlite3(sql) {
  const script = `const D = require(${JSON.stringify(secondConnection)});
    const db = new D(':memory:'); console.log(JSON.stringify(db.prepare(process.argv[1]).all()));`;
  const r = spawnSync(process.execPath, ['-e', script, sql], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
