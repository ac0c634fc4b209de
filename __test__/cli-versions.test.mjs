// triflux-store on files of schema 7 and 8: info names the version and its entry, check
// compares a file with the schema of ITS version (a v6 file relabelled from v7 is not
// clean; a v8 file without its triggers is not), restore-schema gives a converted v8 file
// that version's original indexes back, roles flags an active role without a holder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { createStore as createStoreV6 } from '../index.mjs';
import { createStore as createStoreV7 } from '../v7.mjs';
import { createStore as createStoreV8 } from '../v8.mjs';
import { cli, execInChild, readOnly, sha256 } from './cli-helpers.mjs';
import { captureWarnings, fixtureCopy, tempDir } from './helpers.mjs';

const INDEXES_ON_MESSAGES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql IS NOT NULL ORDER BY rowid";
const CTO_C = 'rk2.eyJwcm9qZWN0X2lkIjoicHJqX0ZpeHR1cmVQcm9qZWN0Q2hhcmx5MDAiLCJyb2xlX2tpbmQiOiJjdG8ifQ';

test('check: the v7 and v8 fixtures and their migrations are clean against their own version', async (t) => {
  for (const [name, open, version, triggers] of [
    ['hub-v7.db', null, 7, 0],
    ['hub-v8.db', null, 8, 2],
    ['hub-v6.db', createStoreV7, 7, 0],
    ['hub-v6.db', createStoreV8, 8, 2],
    ['hub-v7.db', createStoreV8, 8, 2],
  ]) {
    const db = fixtureCopy(t, name);
    if (open) captureWarnings(() => open(db).close());
    const before = sha256(db);
    const r = await cli(['check', db, '--json']);
    assert.equal(r.status, 0, `${name} as v${version}: ${r.stdout}${r.stderr}`);
    const j = JSON.parse(r.stdout);
    assert.equal(j.schema_version, version);
    assert.equal(j.schema_expected, version);
    assert.equal(j.schema_compared.triggers, triggers);
    assert.deepEqual(j.findings, []);
    const human = await cli(['check', db]);
    assert.match(human.stdout, new RegExp(`^schema v${version} +ok \\(`, 'm'));
    assert.equal(sha256(db), before, 'check never changes the file');
  }
});

test('check: a v8 file without a trigger, and a v7 file a v6 store relabelled, are not clean', async (t) => {
  const v8 = fixtureCopy(t, 'hub-v8.db');
  await execInChild(v8, 'DROP TRIGGER role_registry_active_holder_update');
  const r8 = await cli(['check', v8, '--json']);
  assert.equal(r8.status, 1);
  assert.deepEqual(
    JSON.parse(r8.stdout).findings.map((f) => [f.kind, f.name]),
    [['missing_trigger', 'role_registry_active_holder_update']],
  );

  // A v6 store labels the file "6" and keeps the column: its rows now carry it.
  const v7 = fixtureCopy(t, 'hub-v7.db');
  captureWarnings(() => createStoreV6(v7).close());
  const r6 = await cli(['check', v7, '--json']);
  assert.equal(r6.status, 1);
  const j = JSON.parse(r6.stdout);
  assert.equal(j.schema_expected, 6);
  assert.deepEqual(j.findings.map((f) => [f.kind, f.name]), [['extra_column', 'agents.presence_generation']]);
});

test('info: a v7 file opened by the v8 store says 8 and names the /v8 entry', async (t) => {
  const db = fixtureCopy(t, 'hub-v7.db');
  const first = JSON.parse((await cli(['info', db, '--json'])).stdout);
  assert.deepEqual([first.schema_version, first.store_schema_version, first.store_entry], [7, 7, 'triflux-native-store/v7']);
  captureWarnings(() => createStoreV8(db).close());
  const human = await cli(['info', db]);
  assert.match(human.stdout, /^schema version +8 \(triflux-native-store\/v8\)$/m);
});

test('roles: an active role without a holder is flagged; the v8 recovery clears it', async (t) => {
  const db = fixtureCopy(t, 'hub-v7.db');
  const r = JSON.parse((await cli(['roles', db, '--json', '--now', '1700000060000'])).stdout);
  const phantom = r.roles.find((role) => role.role_key_wire === CTO_C);
  assert.equal(phantom.phantom, true);
  assert.deepEqual(r.roles.filter((role) => role.phantom).map((role) => role.role_key_wire), [CTO_C]);
  assert.match((await cli(['roles', db, '--now', '1700000060000'])).stdout, /ACTIVE WITHOUT HOLDER[\s\S]*1 active without a holder$/m);

  const { value: store } = captureWarnings(() => createStoreV8(db));
  store.recoverRoleRegistry(1700000060000);
  store.close();
  const after = JSON.parse((await cli(['roles', db, '--json', '--now', '1700000060000'])).stdout);
  assert.equal(after.roles.filter((role) => role.phantom).length, 0);
});

test("restore-schema on a converted v8 file gives back the v8 original's indexes and keeps its triggers", async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'hub.db');
  const store = createStoreV8(db);
  store.db.transaction(() => {
    for (let i = 0; i < 10_000; i++) store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
  })();
  store.close();
  const fresh = createStoreV8(join(dir, 'fresh.db'));
  const original = fresh.db.prepare(INDEXES_ON_MESSAGES).all();
  fresh.close();
  const converted = readOnly(db, (d) => d.prepare(INDEXES_ON_MESSAGES).all());
  assert.notDeepEqual(converted, original, 'the large-log indexes replaced some');

  const r = await cli(['restore-schema', db, '--json']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.schema_version, 8);
  assert.equal(result.changed, true);
  const after = readOnly(db, (d) => ({
    indexes: d.prepare(INDEXES_ON_MESSAGES).all(),
    version: d.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get(),
    triggers: d.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type='trigger'").pluck().get(),
    messages: d.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
  }));
  assert.deepEqual(after, { indexes: original, version: '8', triggers: 2, messages: 10_000 });
  const check = await cli(['check', db, '--json']);
  assert.equal(check.status, 0, check.stdout);
});

test('agents: the presence generation of each agent from schema 7 on, none before', async (t) => {
  const v7 = fixtureCopy(t, 'hub-v7.db');
  const stored = readOnly(v7, (d) => d.prepare('SELECT agent_id, presence_generation FROM agents').all());
  const listed = JSON.parse((await cli(['agents', v7, '--json'])).stdout).agents;
  assert.deepEqual(listed.map((a) => ({ agent_id: a.agent_id, presence_generation: a.presence_generation })), stored);
  assert.match((await cli(['agents', v7])).stdout, /^agent +cli +pid +status +gen +lease left/m);
  const v6 = fixtureCopy(t, 'hub-v6.db');
  assert.doesNotMatch((await cli(['agents', v6])).stdout, / gen /);
});
