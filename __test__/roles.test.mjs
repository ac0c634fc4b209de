// Role registry slice: rk2 role keys, reservations (BEGIN IMMEDIATE), compare-and-set,
// listings, candidates and reachability, pending role messages and restart recovery.
// Driven through the public entries as the hub does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createStore, Database } from '../index.mjs';
import { tempDir, thrown } from './helpers.mjs';

const require = createRequire(import.meta.url);

const PRJ = 'prj_' + 'A'.repeat(22);
const PRJ2 = 'prj_' + 'B'.repeat(22);
const SCP = 'scp_' + 'C'.repeat(22);
const wireOf = (json) => 'rk2.' + Buffer.from(json, 'utf8').toString('base64url');
const CTO = wireOf(`{"project_id":"${PRJ}","role_kind":"cto"}`);
const CTO2 = wireOf(`{"project_id":"${PRJ2}","role_kind":"cto"}`);
const LEAD = wireOf(`{"project_id":"${PRJ}","role_kind":"lead","scope_id":"${SCP}"}`);

function openStore(t, { cjs = false } = {}) {
  const path = join(tempDir(t), 'hub.db');
  const store = (cjs ? require('../index.cjs') : { createStore }).createStore(path);
  t.after(() => store.close());
  return { store, path };
}

// A second connection for raw SQL: this package's Database (same SQLite library), since a
// second SQLite copy in the process (better-sqlite3) would drop the store's file locks.
function rawDb(t, path) {
  const db = new Database(path);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  t.after(() => db.close());
  return db;
}

function codeOf(fn) {
  const error = thrown(fn);
  assert.equal(error.message, error.code);
  return error.code;
}

// --- role keys ---------------------------------------------------------------

test('role keys: valid CTO and lead wires decode; every contract code in order', (t) => {
  const { store } = openStore(t);
  assert.equal(store.getRole(CTO), null);
  assert.equal(store.getRole(LEAD), null);
  const cases = [
    [undefined, 'ROLE_KEY_WIRE_INVALID'],
    [42, 'ROLE_KEY_WIRE_INVALID'],
    ['rk2.' + 'A'.repeat(509), 'ROLE_KEY_WIRE_INVALID'],
    ['x'.repeat(513), 'ROLE_KEY_WIRE_INVALID'],
    ['rk1.abc', 'ROLE_KEY_WIRE_PREFIX'],
    ['RK2.abc', 'ROLE_KEY_WIRE_PREFIX'],
    ['rk2.', 'ROLE_KEY_NON_CANONICAL'],
    ['rk2.ab+c', 'ROLE_KEY_NON_CANONICAL'],
    [CTO + '=', 'ROLE_KEY_NON_CANONICAL'],
    [wireOf('{bad'), 'ROLE_KEY_NON_CANONICAL'],
    [wireOf('[]'), 'ROLE_KEY_INVALID'],
    [wireOf('null'), 'ROLE_KEY_INVALID'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"cto","extra":1}`), 'ROLE_KEY_FIELD_UNSUPPORTED'],
    [wireOf('{"project_id":"prj_short","role_kind":"cto"}'), 'PROJECT_ID_INVALID'],
    [wireOf('{"project_id":7,"role_kind":"cto"}'), 'PROJECT_ID_INVALID'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"ceo"}`), 'ROLE_KIND_UNSUPPORTED'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"cto","scope_id":null}`), 'ROLE_SCOPE_FORBIDDEN'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"lead"}`), 'SCOPE_REQUIRED'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"lead","scope_id":5}`), 'SCOPE_REQUIRED'],
    [wireOf(`{"project_id":"${PRJ}","role_kind":"lead","scope_id":"scp_x"}`), 'SCOPE_ID_INVALID'],
    // Non-canonical orders, spacing and escapes decode fine but fail the re-encode check.
    [wireOf(`{"role_kind":"cto","project_id":"${PRJ}"}`), 'ROLE_KEY_NON_CANONICAL'],
    [wireOf(`{"project_id": "${PRJ}","role_kind":"cto"}`), 'ROLE_KEY_NON_CANONICAL'],
    [wireOf(`{"project_id":"${PRJ}","scope_id":"${SCP}","role_kind":"lead"}`), 'ROLE_KEY_NON_CANONICAL'],
    [wireOf(`{"project\\u005fid":"${PRJ}","role_kind":"cto"}`), 'ROLE_KEY_NON_CANONICAL'],
  ];
  for (const [wire, code] of cases) {
    assert.equal(codeOf(() => store.getRole(wire)), code, String(wire).slice(0, 80));
    assert.equal(codeOf(() => store.listRoleCandidates(wire)), code);
    assert.equal(codeOf(() => store.listPendingRoleMessages(wire, 0)), code);
  }
  const error = thrown(() => store.getRole('nope'));
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'Error');
});

test('roleIdentity: aliases and strict mismatch checks on own properties', (t) => {
  const { store } = openStore(t);
  assert.equal(store.upsertRoleReservation({ roleKeyWire: CTO }).ok, true);
  const mismatch = (input) => thrown(() => store.upsertRoleReservation(input)).message;
  assert.equal(mismatch({ role_key_wire: CTO, scope_id: null }), 'role key identity mismatch: scope_id');
  assert.equal(mismatch({ role_key_wire: CTO, project_id: PRJ2 }), 'role key identity mismatch: project_id');
  assert.equal(mismatch({ role_key_wire: LEAD, role_kind: 'cto' }), 'role key identity mismatch: role_kind');
  assert.equal(
    thrown(() => store.compareAndSetRole({ role_key_wire: CTO, scope_id: undefined })).message,
    'role key identity mismatch: scope_id',
  );
  // Matching identity fields and inherited ones are fine.
  const input = Object.create({ project_id: 'inherited' });
  input.role_key_wire = CTO;
  input.expected_version = 0;
  input.scope_id = '';
  input.role_kind = 'cto';
  assert.equal(store.upsertRoleReservation(input).ok, true);
  assert.equal(codeOf(() => store.upsertRoleCandidate(null)), 'ROLE_KEY_WIRE_INVALID');
  assert.equal(codeOf(() => store.updateCandidateReachability({})), 'ROLE_KEY_WIRE_INVALID');
});

// --- reservations ------------------------------------------------------------

test('upsertRoleReservation: insert defaults, holder implies elected-probing and a fresh activation id', (t) => {
  const { store } = openStore(t);
  const before = Date.now();
  const out = store.upsertRoleReservation({ role_key_wire: CTO });
  assert.deepEqual(Object.keys(out), ['ok', 'role']);
  assert.equal(out.ok, true);
  const role = out.role;
  assert.deepEqual(Object.keys(role), [
    'role_key_wire', 'project_id', 'role_kind', 'scope_id', 'state', 'holder_agent_id', 'previous_holder_agent_id',
    'epoch', 'activation_seq', 'activation_id', 'activation_deadline_ms', 'holder_lease_expires_ms',
    'charter_version', 'charter_acked_epoch', 'retry_count', 'next_probe_ms', 'blocked_reason',
    'last_transition_ms', 'last_reason', 'version',
  ]);
  assert.equal(role.state, 'electable');
  assert.equal(role.scope_id, '');
  assert.equal(role.epoch, 0);
  assert.equal(role.activation_seq, 0);
  assert.equal(role.version, 0);
  assert.equal(role.activation_id, null);
  assert.equal(role.last_reason, 'role_reserved');
  assert.ok(role.last_transition_ms >= before);

  const lead = store.upsertRoleReservation({
    role_key_wire: LEAD, holder_agent_id: 'a1', charter_version: 7, holder_lease_expires_ms: 5000, retry_count: 2,
  }).role;
  assert.equal(lead.state, 'elected-probing');
  assert.match(lead.activation_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
  assert.equal(lead.scope_id, SCP);
  assert.equal(lead.charter_version, '7.0'); // a JS number binds as REAL into TEXT
  assert.equal(lead.holder_lease_expires_ms, 5000);
  assert.equal(lead.retry_count, 2);
  assert.deepEqual(store.getRole(LEAD), lead);
});

test('upsertRoleReservation: guards with aliases, +1 rules and the stale reasons (strict types)', (t) => {
  const { store } = openStore(t);
  store.upsertRoleReservation({ role_key_wire: CTO });
  const current = store.getRole(CTO);
  const fail = (input) => store.upsertRoleReservation({ role_key_wire: CTO, ...input });

  let out = fail({ expected_version: '0' });
  assert.deepEqual(out, { ok: false, reason: 'stale_version', role: current });
  assert.equal(fail({ expectedVersion: 3 }).reason, 'stale_version');
  assert.equal(fail({ expected_version: null, expectedVersion: 1 }).reason, 'stale_version');
  assert.equal(fail({ expected_epoch: 1 }).reason, 'stale_epoch');
  assert.equal(fail({ expectedEpoch: 0n }).reason, 'stale_epoch');
  assert.equal(fail({ epoch: 2 }).reason, 'stale_epoch');
  assert.equal(fail({ next_epoch: '1' }).reason, 'stale_epoch');
  assert.equal(fail({ activation_seq: 0 }).reason, 'stale_activation_seq');
  assert.equal(fail({ next_activation_seq: 5 }).reason, 'stale_activation_seq');
  assert.deepEqual(store.getRole(CTO), current); // nothing was written

  out = fail({ expected_version: 0, expected_epoch: 0, epoch: 1, activation_seq: 1, holder_agent_id: 'h1' });
  assert.equal(out.ok, true);
  assert.equal(out.role.version, 1);
  assert.equal(out.role.epoch, 1);
  assert.equal(out.role.activation_seq, 1);
  // Defaults: epoch and seq advance by one.
  out = fail({ holder_agent_id: 'h2' });
  assert.equal(out.role.epoch, 2);
  assert.equal(out.role.activation_seq, 2);
  assert.equal(out.role.previous_holder_agent_id, 'h1');
  // Same holder: previous holder kept.
  out = fail({ holder_agent_id: 'h2' });
  assert.equal(out.role.previous_holder_agent_id, 'h1');
});

test('upsertRoleReservation: null keeps activation fields, clears blocked_reason; invalid state rolls back', (t) => {
  const { store } = openStore(t);
  const first = store.upsertRoleReservation({
    role_key_wire: CTO, holder_agent_id: 'h1', activation_deadline_ms: 111, holder_lease_expires_ms: 222,
    charter_version: 'v1', charter_acked_epoch: 0, next_probe_ms: 333, blocked_reason: 'blocked',
  }).role;
  const second = store.upsertRoleReservation({
    role_key_wire: CTO, holder_agent_id: null, state: 'electable', activation_id: null, activation_deadline_ms: null,
    holder_lease_expires_ms: null, charter_version: null, charter_acked_epoch: null, next_probe_ms: null,
    blocked_reason: null, last_reason: 'fenced', last_transition_ms: 99,
  }).role;
  assert.equal(second.holder_agent_id, null);
  assert.equal(second.previous_holder_agent_id, 'h1');
  assert.equal(second.activation_id, first.activation_id);
  assert.equal(second.activation_deadline_ms, 111);
  assert.equal(second.holder_lease_expires_ms, 222);
  assert.equal(second.charter_version, 'v1');
  assert.equal(second.charter_acked_epoch, 0);
  assert.equal(second.next_probe_ms, 333);
  assert.equal(second.blocked_reason, null);
  assert.equal(second.last_reason, 'fenced');
  assert.equal(second.last_transition_ms, 99);

  const error = thrown(() => store.upsertRoleReservation({ role_key_wire: CTO, state: 'dormant' }));
  assert.equal(error.message, 'invalid role reachability state: dormant');
  assert.equal(thrown(() => store.upsertRoleReservation({ role_key_wire: CTO2, state: 5 })).message, 'invalid role reachability state: 5');
  assert.equal(thrown(() => store.upsertRoleReservation({ role_key_wire: CTO2, state: 2 ** 53 + 2 })).message, 'invalid role reachability state: 9007199254740994');
  assert.equal(thrown(() => store.upsertRoleReservation({ role_key_wire: CTO2, state: 1e21 })).message, 'invalid role reachability state: 1e+21');
  assert.equal(thrown(() => store.upsertRoleReservation({ role_key_wire: CTO2, state: ['a', 1] })).message, 'invalid role reachability state: a,1');
  assert.equal(store.getRole(CTO2), null);
  assert.deepEqual(store.getRole(CTO), second);
  // Booleans cannot be bound: the transaction rolls back.
  assert.throws(() => store.upsertRoleReservation({ role_key_wire: CTO2, retry_count: true }), TypeError);
  assert.equal(store.getRole(CTO2), null);
});

test('constraint errors from the role tables surface as SqliteError', (t) => {
  const { store, path } = openStore(t);
  let error = thrown(() => store.upsertRoleReservation({ role_key_wire: CTO, epoch: -1 }));
  assert.equal(error.name, 'SqliteError');
  assert.equal(error.code, 'SQLITE_CONSTRAINT_CHECK');
  assert.match(error.message, /CHECK constraint failed/);
  assert.equal(store.getRole(CTO), null);

  // A legacy row with the same identity under another wire text trips UNIQUE.
  const db = rawDb(t, path);
  db.prepare(`INSERT INTO role_registry (role_key_wire, project_id, role_kind, scope_id, state, last_transition_ms, last_reason)
    VALUES ('legacy', ?, 'cto', '', 'electable', 1, 'x')`).run(PRJ);
  error = thrown(() => store.upsertRoleReservation({ role_key_wire: CTO }));
  assert.equal(error.code, 'SQLITE_CONSTRAINT_UNIQUE');
  assert.match(error.message, /UNIQUE constraint failed: role_registry.project_id, role_registry.role_kind, role_registry.scope_id/);

  store.upsertRoleReservation({ role_key_wire: LEAD });
  error = thrown(() => store.upsertRoleCandidate({ role_key_wire: LEAD, agent_id: 'a', source: 'bogus' }));
  assert.match(error.message, /CHECK constraint failed/);
  error = thrown(() => store.upsertRoleCandidate({ role_key_wire: CTO2, agent_id: 'a' }));
  assert.equal(error.code, 'SQLITE_CONSTRAINT_FOREIGNKEY');
  assert.equal(error.message, 'FOREIGN KEY constraint failed');
});

// --- compare-and-set ---------------------------------------------------------

function guardOf(role) {
  return {
    role_key_wire: role.role_key_wire,
    expected_version: role.version,
    expected_epoch: role.epoch,
    expected_activation_seq: role.activation_seq,
    expected_activation_id: role.activation_id,
  };
}

test('compareAndSetRole: not_found, invalid_cas, strict stale reasons, aliases', (t) => {
  const { store } = openStore(t);
  assert.deepEqual(store.compareAndSetRole({ role_key_wire: CTO, expected_version: 0 }), { ok: false, reason: 'not_found', role: null });
  const role = store.upsertRoleReservation({ role_key_wire: CTO, holder_agent_id: 'h' }).role;
  const cas = (input) => store.compareAndSetRole({ role_key_wire: CTO, ...input });
  // Activation keys must be own properties, version and epoch non-null.
  assert.deepEqual(cas({ expected_version: 0, expected_epoch: 0, expected_activation_seq: 0 }), { ok: false, reason: 'invalid_cas', role });
  assert.equal(cas({ expected_version: 0, expected_epoch: 0, expected_activation_id: role.activation_id }).reason, 'invalid_cas');
  assert.equal(cas({ ...guardOf(role), expected_version: null }).reason, 'invalid_cas');
  assert.equal(cas({ ...guardOf(role), expected_epoch: undefined }).reason, 'invalid_cas');
  const inherited = Object.create({ expected_activation_id: role.activation_id });
  Object.assign(inherited, { role_key_wire: CTO, expected_version: 0, expected_epoch: 0, expected_activation_seq: 0 });
  assert.equal(store.compareAndSetRole(inherited).reason, 'invalid_cas');

  assert.equal(cas({ ...guardOf(role), expected_version: '0' }).reason, 'stale_version');
  assert.equal(cas({ ...guardOf(role), expected_epoch: 1 }).reason, 'stale_epoch');
  assert.equal(cas({ ...guardOf(role), expected_activation_seq: 3 }).reason, 'stale_activation_seq');
  assert.equal(cas({ ...guardOf(role), expected_activation_id: null }).reason, 'stale_activation_id');
  assert.equal(cas({ ...guardOf(role), expected_activation_id: undefined }).reason, 'stale_activation_id');
  // camelCase and bare aliases.
  const out = cas({
    expectedVersion: 0, epoch: 0, expectedActivationSeq: 0, activation_id: role.activation_id, patch: { state: 'active' },
  });
  assert.equal(out.ok, true);
  assert.equal(out.role.state, 'active');
  assert.equal(out.role.version, 1);
  assert.deepEqual(store.getRole(CTO), out.role);
  // The old guard is now stale.
  assert.deepEqual(cas({ ...guardOf(role), patch: {} }), { ok: false, reason: 'stale_version', role: out.role });
});

test('compareAndSetRole: patch semantics, epoch and seq fixed, invalid state throws', (t) => {
  const { store } = openStore(t);
  const role = store.upsertRoleReservation({
    role_key_wire: CTO, holder_agent_id: 'h', activation_deadline_ms: 10, holder_lease_expires_ms: 20,
    charter_version: 'c', next_probe_ms: 30, blocked_reason: 'b', retry_count: 4,
  }).role;
  const before = Date.now();
  let out = store.compareAndSetRole({
    ...guardOf(role),
    patch: {
      holder_agent_id: null, activation_deadline_ms: null, charter_version: null, blocked_reason: null,
      retry_count: null, epoch: 9, activation_seq: 9, last_reason: 'patched',
    },
  });
  assert.equal(out.ok, true);
  const r = out.role;
  assert.equal(r.holder_agent_id, null);
  assert.equal(r.activation_deadline_ms, null);
  assert.equal(r.charter_version, null);
  assert.equal(r.blocked_reason, null);
  assert.equal(r.holder_lease_expires_ms, 20); // untouched
  assert.equal(r.next_probe_ms, 30);
  assert.equal(r.retry_count, 4); // ?? keeps
  assert.equal(r.epoch, 0);
  assert.equal(r.activation_seq, 0);
  assert.equal(r.last_reason, 'patched');
  assert.ok(r.last_transition_ms >= before);
  // `changes` is an alias of `patch`; last_reason is kept without one.
  out = store.compareAndSetRole({ ...guardOf(r), changes: { state: 'quarantined' } });
  assert.equal(out.role.state, 'quarantined');
  assert.equal(out.role.last_reason, 'patched');
  const error = thrown(() => store.compareAndSetRole({ ...guardOf(out.role), patch: { state: 'gone' } }));
  assert.equal(error.message, 'invalid role reachability state: gone');
  assert.deepEqual(store.getRole(CTO), out.role);
});

// --- listings ----------------------------------------------------------------

test('listRoleKeys: allow-list filters, null matches nothing, states IN list, ordered', (t) => {
  const { store } = openStore(t);
  store.upsertRoleReservation({ role_key_wire: LEAD, holder_agent_id: 'x' });
  store.upsertRoleReservation({ role_key_wire: CTO2 });
  store.upsertRoleReservation({ role_key_wire: CTO });
  const all = [CTO, CTO2, LEAD].sort();
  assert.deepEqual(store.listRoleKeys(), all);
  assert.deepEqual(store.listRoleKeys({}), all);
  assert.deepEqual(store.listRoleKeys({ project_id: PRJ }), [CTO, LEAD].sort());
  assert.deepEqual(store.listRoleKeys({ role_kind: 'lead' }), [LEAD]);
  assert.deepEqual(store.listRoleKeys({ scope_id: '' }), [CTO, CTO2].sort());
  assert.deepEqual(store.listRoleKeys({ scope_id: null }), []);
  assert.deepEqual(store.listRoleKeys({ project_id: undefined, bogus: 1 }), all);
  assert.deepEqual(store.listRoleKeys({ state: 'elected-probing' }), [LEAD]);
  assert.deepEqual(store.listRoleKeys({ states: ['electable'] }), [CTO, CTO2].sort());
  assert.deepEqual(store.listRoleKeys({ states: [] }), all);
  assert.deepEqual(store.listRoleKeys({ states: ['electable', 'elected-probing'], project_id: PRJ }), [CTO, LEAD].sort());
  assert.deepEqual(store.listRoleKeys({ state: 'electable', states: ['elected-probing'] }), []);
  assert.throws(() => store.listRoleKeys(null), { name: 'TypeError', message: "Cannot read properties of null (reading 'project_id')" });
  assert.throws(() => store.listRoleKeys({ state: true }), TypeError);
  // Array holes leave empty IN slots, exactly as the original's map().join() did.
  // eslint-disable-next-line no-sparse-arrays
  assert.throws(() => store.listRoleKeys({ states: [, 'electable'] }), { name: 'SqliteError', message: 'near ",": syntax error' });
  // eslint-disable-next-line no-sparse-arrays
  assert.deepEqual(store.listRoleKeys({ states: [,] }), []);
  assert.deepEqual(store.listRoleKeys({ states: [undefined] }), []);
});

test('listRolesWithExpiredHolder: holder set and lease NULL or <= now, raw rows', (t) => {
  const { store } = openStore(t);
  store.upsertRoleReservation({ role_key_wire: CTO, holder_agent_id: 'a', holder_lease_expires_ms: 1000 });
  store.upsertRoleReservation({ role_key_wire: CTO2, holder_agent_id: 'b' });
  store.upsertRoleReservation({ role_key_wire: LEAD });
  assert.deepEqual(store.listRolesWithExpiredHolder(999).map((r) => r.role_key_wire), [CTO2]);
  assert.deepEqual(store.listRolesWithExpiredHolder(1000).map((r) => r.role_key_wire), [CTO, CTO2].sort());
  assert.deepEqual(store.listRolesWithExpiredHolder(1000)[0], store.getRole([CTO, CTO2].sort()[0]));
});

// --- candidates ----------------------------------------------------------------

test('role candidates: upsert defaults, ordering, transport locators kept exactly, cascade', (t) => {
  const { store, path } = openStore(t, { cjs: true });
  store.upsertRoleReservation({ role_key_wire: CTO });
  const before = Date.now();
  const a = store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'a' });
  assert.deepEqual(Object.keys(a), [
    'role_key_wire', 'agent_id', 'source', 'priority', 'consecutive_probe_failures', 'excluded_until_ms',
    'last_probe_ms', 'last_probe_code', 'updated_at_ms', 'transport_locators',
  ]);
  assert.equal(a.source, 'operator');
  assert.equal(a.priority, 0);
  assert.deepEqual(a.transport_locators, []);
  assert.ok(a.updated_at_ms >= before);
  const locators = [{ kind: 'pipe', path: '/tmp/x.sock' }, { kind: 'http', url: 'http://h:1', n: 1.5 }];
  store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'b', source: 'grant', priority: 5, transport_locators: locators, updated_at_ms: 10, excluded_until_ms: 50, last_probe_code: 'E' });
  store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'c', priority: 5, updated_at_ms: 20 });
  assert.deepEqual(store.listRoleCandidates(CTO).map((c) => c.agent_id), ['c', 'b', 'a']);
  // Without transport_locators the stored JSON is parsed and re-stringified.
  const db = rawDb(t, path);
  db.prepare("UPDATE role_candidates SET transport_locators_json=' [ {\"b\":1, \"1\":2} , 1.0e1 ] ' WHERE agent_id='b'").run();
  let b = store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'b', excluded_until_ms: undefined, last_probe_code: null });
  assert.equal(db.prepare("SELECT transport_locators_json FROM role_candidates WHERE agent_id='b'").pluck().get(), '[{"1":2,"b":1},10]');
  assert.equal(b.source, 'grant');
  assert.equal(b.priority, 5);
  assert.equal(b.excluded_until_ms, 50);
  assert.equal(b.last_probe_code, null);
  db.prepare("UPDATE role_candidates SET transport_locators_json='{broken' WHERE agent_id='b'").run();
  b = store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'b' });
  assert.deepEqual(b.transport_locators, []);
  assert.throws(() => store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'b', transport_locators: [1n] }), TypeError);

  db.prepare('DELETE FROM role_registry WHERE role_key_wire=?').run(CTO);
  assert.deepEqual(store.listRoleCandidates(CTO), []);
  assert.equal(db.prepare('SELECT COUNT(*) FROM role_candidates').pluck().get(), 0);
});

test('updateCandidateReachability: probe flags, undefined keeps, not_found shape', (t) => {
  const { store } = openStore(t);
  assert.equal(codeOf(() => store.updateCandidateReachability({ role_key_wire: 'x', agent_id: 'a' })), 'ROLE_KEY_WIRE_PREFIX');
  store.upsertRoleReservation({ role_key_wire: LEAD });
  const nf = store.updateCandidateReachability({ role_key_wire: LEAD, agent_id: 'ghost' });
  assert.deepEqual(nf, { ok: false, reason: 'not_found' });
  assert.deepEqual(Object.keys(nf), ['ok', 'reason']);
  store.upsertRoleCandidate({ role_key_wire: LEAD, agent_id: 'a', consecutive_probe_failures: 2, excluded_until_ms: 7, last_probe_code: 'X' });
  const up = (input) => store.updateCandidateReachability({ role_key_wire: LEAD, agent_id: 'a', ...input });
  let out = up({ probe_failed: true, consecutive_probe_failures: 10, last_probe_ms: 5, updated_at_ms: 6 });
  assert.deepEqual(Object.keys(out), ['ok', 'candidate']);
  assert.equal(out.candidate.consecutive_probe_failures, 3); // the flag overrides the explicit value
  assert.equal(out.candidate.last_probe_ms, 5);
  assert.equal(out.candidate.updated_at_ms, 6);
  assert.equal(out.candidate.excluded_until_ms, 7);
  assert.equal(out.candidate.last_probe_code, 'X');
  assert.equal(up({ increment_probe_failures: true }).candidate.consecutive_probe_failures, 4);
  assert.equal(up({ probe_failed: 'yes' }).candidate.consecutive_probe_failures, 4);
  assert.equal(up({ consecutive_probe_failures: 9 }).candidate.consecutive_probe_failures, 9);
  out = up({ probe_succeeded: true, consecutive_probe_failures: 9, excluded_until_ms: null, last_probe_code: null });
  assert.equal(out.candidate.consecutive_probe_failures, 0);
  assert.equal(out.candidate.excluded_until_ms, null);
  assert.equal(out.candidate.last_probe_code, null);
  assert.ok(out.candidate.last_probe_ms > 1000);
});

// --- pending messages and recovery ------------------------------------------------

test('listPendingRoleMessages: role_key_wire stored by auditLog, status and expiry honoured', (t) => {
  const { store } = openStore(t);
  const base = { type: 'event', from: 'a', to: 'topic:role', topic: 'role' };
  const m1 = store.auditLog({ ...base, role_key_wire: CTO, priority: 3, payload: { n: 1 } });
  const m2 = store.auditLog({ ...base, role_key_wire: CTO, priority: 7 });
  const m3 = store.auditLog({ ...base, role_key_wire: CTO, status: 'delivered' });
  store.auditLog({ ...base, role_key_wire: CTO, status: 'acked' });
  store.auditLog({ ...base, role_key_wire: CTO2 });
  store.auditLog({ ...base });
  assert.equal(store.getMessage(m1.id).role_key_wire, CTO);
  const now = Date.now();
  const pending = store.listPendingRoleMessages(CTO, now);
  assert.deepEqual(pending.map((m) => m.id), [m2.id, m3.id, m1.id]); // priority DESC
  assert.deepEqual(pending[2].payload, { n: 1 });
  assert.ok(!('payload_json' in pending[0]));
  const lastExpiry = Math.max(m1.expires_at_ms, m2.expires_at_ms, m3.expires_at_ms);
  assert.ok(store.listPendingRoleMessages(CTO, lastExpiry - 1).length >= 1); // expires_at_ms > now, strictly
  assert.deepEqual(store.listPendingRoleMessages(CTO, lastExpiry), []);
});

test('recoverRoleRegistry: expired holder, live holder, orphaned activation, untouched rows', (t) => {
  const { store } = openStore(t);
  const now = 10_000;
  store.upsertRoleReservation({ role_key_wire: CTO, holder_agent_id: 'dead', holder_lease_expires_ms: now, blocked_reason: 'b' });
  const live = store.upsertRoleReservation({ role_key_wire: CTO2, holder_agent_id: 'alive', holder_lease_expires_ms: now + 1 }).role;
  const orphan = store.upsertRoleReservation({ role_key_wire: LEAD, activation_id: 'act-1', blocked_reason: 'kept' }).role;
  store.upsertRoleCandidate({ role_key_wire: CTO, agent_id: 'c1' });
  store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', role_key_wire: LEAD, ttl_ms: 300000 });

  const out = store.recoverRoleRegistry(now);
  assert.deepEqual(Object.keys(out), ['roles', 'candidates', 'pending_messages']);
  const [a, b, c] = [CTO, CTO2, LEAD].map((w) => out.roles.find((r) => r.role_key_wire === w));
  assert.equal(a.state, 'electable');
  assert.equal(a.holder_agent_id, null);
  assert.equal(a.previous_holder_agent_id, 'dead');
  assert.equal(a.activation_id, null);
  assert.equal(a.holder_lease_expires_ms, null);
  assert.equal(a.blocked_reason, null);
  assert.equal(a.epoch, 1);
  assert.equal(a.activation_seq, 1);
  assert.equal(a.version, 1);
  assert.equal(a.last_transition_ms, now);
  assert.equal(a.last_reason, 'restart_holder_lease_expired');
  assert.equal(b.state, 'elected-probing');
  assert.equal(b.holder_agent_id, 'alive');
  assert.equal(b.holder_lease_expires_ms, now + 1);
  assert.notEqual(b.activation_id, live.activation_id);
  assert.equal(b.last_reason, 'restart_reprobe_required');
  assert.equal(c.state, 'electable');
  assert.equal(c.activation_id, null);
  assert.equal(c.blocked_reason, 'kept');
  assert.equal(c.epoch, orphan.epoch + 1);
  assert.equal(c.last_reason, 'restart_activation_fenced');
  assert.deepEqual(out.roles.map((r) => r.role_key_wire), [CTO, CTO2, LEAD].sort());
  assert.deepEqual(out.candidates.map((x) => x.agent_id), ['c1']);
  assert.deepEqual(out.candidates[0].transport_locators, []);
  assert.equal(out.pending_messages.length, 1); // expires_at_ms > now
  assert.equal(out.pending_messages[0].role_key_wire, LEAD);
});

test('recoverRoleRegistry: pending messages use now; a failing UPDATE rolls back everything', (t) => {
  const { store, path } = openStore(t);
  store.upsertRoleReservation({ role_key_wire: CTO, holder_agent_id: 'dead', holder_lease_expires_ms: 1 });
  store.upsertRoleReservation({ role_key_wire: LEAD, holder_agent_id: 'dead2', holder_lease_expires_ms: 1 });
  const msg = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', role_key_wire: CTO });
  const before = [store.getRole(CTO), store.getRole(LEAD)];
  const db = rawDb(t, path);
  db.exec(`CREATE TRIGGER no_lead AFTER UPDATE ON role_registry WHEN NEW.role_kind='lead'
    BEGIN SELECT RAISE(ABORT, 'lead frozen'); END`);
  const error = thrown(() => store.recoverRoleRegistry(msg.created_at_ms));
  assert.equal(error.message, 'lead frozen');
  assert.equal(error.code, 'SQLITE_CONSTRAINT_TRIGGER');
  assert.deepEqual([store.getRole(CTO), store.getRole(LEAD)], before); // CTO's update was rolled back too
  db.exec('DROP TRIGGER no_lead');
  const out = store.recoverRoleRegistry(msg.created_at_ms);
  assert.deepEqual(out.pending_messages.map((m) => m.id), [msg.id]);
  assert.equal(out.pending_messages[0].role_key_wire, CTO);
  assert.equal(store.recoverRoleRegistry(msg.expires_at_ms).pending_messages.length, 0);
  // A second recovery with no holders left and no activation leaves rows alone.
  const again = store.recoverRoleRegistry(msg.created_at_ms);
  assert.deepEqual(again.roles, out.roles);
});
