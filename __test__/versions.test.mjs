// The three entries (the root = /v6, /v7, /v8), ESM and CommonJS, by the package's own
// name: each createStore writes its schema version, has its members in the original's
// order, fences (v7, v8) or ignores (v6) presence generations, refuses (v8) or keeps
// (v6, v7) an active role without a holder, and relabels a file of another version with
// the original's warning. The golden traces and fixtures (replay.test.mjs) pin the rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import * as root from 'triflux-native-store';
import * as v6 from 'triflux-native-store/v6';
import * as v7 from 'triflux-native-store/v7';
import * as v8 from 'triflux-native-store/v8';

import { captureWarnings, fixtureCopy, tempDir, thrown } from './helpers.mjs';

const require = createRequire(import.meta.url);
const entries = {
  6: { esm: v6, cjs: require('triflux-native-store/v6') },
  7: { esm: v7, cjs: require('triflux-native-store/v7') },
  8: { esm: v8, cjs: require('triflux-native-store/v8') },
};

const CTO = 'rk2.eyJwcm9qZWN0X2lkIjoicHJqX0ZpeHR1cmVQcm9qZWN0Q2hhcmx5MDAiLCJyb2xlX2tpbmQiOiJjdG8ifQ';
const schemaVersion = (store) => store.db.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get();
const columns = (store) => store.db.pragma('table_info(agents)').map((c) => c.name);
const triggers = (store) => store.db.prepare("SELECT name FROM sqlite_master WHERE type='trigger' ORDER BY name").pluck().all();

test('the root entry is /v6, and every entry exports the same module shape in ESM and CommonJS', () => {
  assert.equal(root.createStore, v6.createStore);
  assert.equal(require('triflux-native-store').createStore, v6.createStore);
  for (const [version, { esm, cjs }] of Object.entries(entries)) {
    assert.deepEqual(Object.keys(esm).sort(), ['Database', 'SqliteError', 'checkpointStatus', 'createStore', 'default', 'importBetterSqlite3', 'readStats', 'uuidv7', 'version']);
    assert.equal(esm.checkpointStatus, v6.checkpointStatus, 'one checkpointStatus for all entries');
    assert.equal(esm.createStore, cjs.createStore, `v${version}`);
    assert.equal(esm.Database, v6.Database, 'one Database class for all entries');
  }
  assert.notEqual(v7.createStore, v8.createStore);
});

for (const version of [6, 7, 8]) {
  for (const kind of ['esm', 'cjs']) {
    test(`v${version} (${kind}): a fresh file gets schema ${version}, the members in the original's order`, (t) => {
      const path = join(tempDir(t), 'hub.db');
      const store = entries[version][kind].createStore(path);
      try {
        assert.equal(schemaVersion(store), String(version));
        const keys = Object.keys(store);
        if (version === 6) {
          assert.deepEqual(keys.slice(0, 3), ['uuidv7', 'db', 'close']);
          assert.equal(store.type, undefined);
          assert.equal(store.fingerprint, undefined);
          assert.ok(!columns(store).includes('presence_generation'));
        } else {
          assert.deepEqual(keys.slice(0, 5), ['db', 'type', 'fingerprint', 'uuidv7', 'close']);
          assert.equal(store.type, 'sqlite');
          assert.equal(store.fingerprint, `sqlite:${createHash('sha256').update(path).digest('hex')}`);
          const cols = columns(store);
          assert.equal(cols[cols.indexOf('lease_expires_ms') + 1], 'presence_generation');
        }
        assert.deepEqual(triggers(store), version === 8 ? ['role_registry_active_holder_insert', 'role_registry_active_holder_update'] : []);
        assert.equal(keys.length, version === 6 ? 59 : 61);
      } finally {
        store.close();
      }
    });
  }
}

test('v7 and v8 fence a stale incarnation; v6 ignores the generation', (t) => {
  const dir = tempDir(t);
  for (const version of [7, 8]) {
    const store = entries[version].esm.createStore(join(dir, `hub-${version}.db`));
    const first = store.registerAgent({ agent_id: 'a', cli: 'codex' });
    assert.equal(first.presence_generation, 1);
    assert.deepEqual(Object.keys(first), ['agent_id', 'lease_id', 'presence_generation', 'lease_expires_ms', 'server_time_ms', 'effective']);
    assert.equal(first.effective.store_fingerprint, store.fingerprint);
    assert.deepEqual(Object.keys(first.effective).slice(-2), ['db_path', 'store_fingerprint']);
    const second = store.registerAgent({ agent_id: 'a', cli: 'codex' });
    assert.equal(second.presence_generation, 2);
    // The previous incarnation's heartbeat and status write change nothing.
    assert.equal(store.refreshLease('a', 60000, 1).effective.updated, false);
    assert.equal(store.updateAgentStatus('a', 'offline', 1), false);
    // A missing generation binds NULL and matches no row.
    assert.equal(store.refreshLease('a', 60000).effective.updated, false);
    assert.equal(store.updateAgentStatus('a', 'offline'), false);
    assert.equal(store.getAgent('a').status, 'online');
    // The current one (affinity: "2" and 2.0 match the INTEGER column).
    assert.equal(store.refreshLease('a', 60000, '2').effective.updated, true);
    assert.equal(store.refreshLease('a', 60000, 2).effective.store_fingerprint, store.fingerprint);
    assert.equal(store.updateAgentStatus('a', 'stale', 2), true);
    assert.equal(store.refreshLease('a', 60000, 2).effective.updated, true, 'a stale agent is revived');
    assert.equal(store.getAgent('a').status, 'online');
    assert.equal(thrown(() => store.updateAgentStatus('a', 'online', { generation: 2 })).message, 'Too few parameter values were provided');
    store.close();
  }
  const store = v6.createStore(join(dir, 'hub-6.db'));
  const registered = store.registerAgent({ agent_id: 'a', cli: 'codex' });
  assert.ok(!('presence_generation' in registered) && !('store_fingerprint' in registered.effective));
  assert.equal(store.refreshLease('a', 60000, 99).effective.updated, true);
  assert.equal(store.updateAgentStatus('a', 'stale', 99), true);
  store.close();
});

test('v7 sweeps each agent one step: online and long expired becomes stale, not offline', (t) => {
  const dir = tempDir(t);
  const expired = Date.now() - 3_600_000;
  for (const [version, want] of [
    [6, { stale: 2, offline: 3 }],
    [7, { stale: 2, offline: 1 }],
    [8, { stale: 2, offline: 1 }],
  ]) {
    const store = entries[version].esm.createStore(join(dir, `sweep-${version}.db`));
    for (const id of ['online-1', 'online-2', 'stale-1']) store.registerAgent({ agent_id: id, cli: 'codex' });
    store.db.prepare('UPDATE agents SET lease_expires_ms = ?').run(expired);
    store.db.prepare("UPDATE agents SET status = 'stale' WHERE agent_id = 'stale-1'").run();
    assert.deepEqual(store.sweepStaleAgents(), want, `v${version}`);
    assert.deepEqual(Object.keys(store.sweepStaleAgents()), ['stale', 'offline']);
    store.close();
  }
});

test('v8 refuses an active role without a holder and resets one an older file holds; v7 keeps it', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'hub.db');
  const store7 = v7.createStore(path);
  assert.equal(store7.upsertRoleReservation({ role_key_wire: CTO, state: 'active' }).ok, true);
  assert.equal(store7.recoverRoleRegistry(Date.now()).roles[0].state, 'active', 'v7 leaves a phantom');
  store7.close();

  const { value: store8, warnings } = captureWarnings(() => v8.createStore(path));
  assert.deepEqual(warnings, ['[store] schema version mismatch: found=7 expected=8. Applying schema.sql (idempotent).']);
  const error = thrown(() => store8.upsertRoleReservation({ role_key_wire: CTO, state: 'active', expected_version: 0, expected_epoch: 0 }));
  assert.equal(error.code, 'SQLITE_CONSTRAINT_TRIGGER');
  assert.equal(error.message, 'CHECK constraint failed: active role requires holder_agent_id');
  const [role] = store8.recoverRoleRegistry(Date.now()).roles;
  assert.equal(role.state, 'electable');
  assert.equal(role.last_reason, 'restart_activation_fenced');
  store8.close();

  // A file the v8 store created has the CHECK as well; with the triggers dropped it refuses.
  const fresh = v8.createStore(join(dir, 'fresh.db'));
  fresh.db.exec('DROP TRIGGER role_registry_active_holder_insert');
  const check = thrown(() => fresh.upsertRoleReservation({ role_key_wire: CTO, state: 'active' }));
  assert.equal(check.code, 'SQLITE_CONSTRAINT_CHECK');
  fresh.close();
});

test('each entry relabels a file of another version with the original warning, and keeps its data', (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store8 = v8.createStore(path);
  store8.registerAgent({ agent_id: 'a', cli: 'codex' });
  store8.close();
  for (const [version, found] of [
    [6, 8],
    [7, 6],
    [8, 7],
  ]) {
    const { value: store, warnings } = captureWarnings(() => entries[version].cjs.createStore(path));
    assert.deepEqual(warnings, [`[store] schema version mismatch: found=${found} expected=${version}. Applying schema.sql (idempotent).`]);
    assert.equal(schemaVersion(store), String(version));
    // The column and the triggers stay; a v6 store does not read them.
    assert.ok(columns(store).includes('presence_generation'));
    assert.equal(triggers(store).length, 2);
    assert.equal(store.listAllAgents().length, 1);
    store.close();
  }
  const { warnings } = captureWarnings(() => v8.createStore(path).close());
  assert.deepEqual(warnings, []);
});

test('a bad schema version is refused by the native layer', () => {
  const native = require('../lib/native.cjs');
  native.load();
  assert.throws(() => native.storeStatements(9), /schema version is 6, 7 or 8/);
});

test("readStats and Database of /v7 and /v8 read a file of their version without changing it", (t) => {
  for (const [version, fixture] of [
    [7, 'hub-v7.db'],
    [8, 'hub-v8.db'],
  ]) {
    const { readStats, Database, createStore } = entries[version].esm;
    const path = fixtureCopy(t, fixture);
    const before = readFileSync(path);
    const stats = readStats(path);
    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get(), String(version));
    db.close();
    assert.ok(readFileSync(path).equals(before), 'read-only: the file is unchanged');
    const store = createStore(path);
    assert.deepEqual(stats.hub, store.getHubStats());
    assert.deepEqual(stats.audit, store.getAuditStats());
    assert.equal(store.db.prepare('SELECT COUNT(*) FROM agents WHERE presence_generation > 0').pluck().get(), 4);
    store.close();
  }
});
