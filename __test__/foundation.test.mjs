// Foundation slice: createStore, agents, messages, human requests, dead letters, stats,
// migration of v4/v5 files, close. Driven through the public ESM entry as the hub does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createStore, uuidv7, importBetterSqlite3, SqliteError, Database } from '../index.mjs';
import { captureWarnings, fixtureCopy, loneSurrogateHex, nextMs, tempDir, thrown } from './helpers.mjs';

const require = createRequire(import.meta.url);

function openStore(t) {
  const path = join(tempDir(t), 'nested', 'dir', 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  return { store, path };
}

/**
 * A second connection on the same file, for raw writes the store never makes. It is this
 * package's Database (the same SQLite library): a second SQLite copy in one process (e.g.
 * better-sqlite3) would release the store's POSIX locks when it closes the file.
 */
function rawDb(t, path) {
  const db = new Database(path);
  t.after(() => db.close());
  return db;
}

test('ESM and CommonJS entries export the same functions', () => {
  const cjs = require('../index.cjs');
  assert.equal(cjs.createStore, createStore);
  assert.equal(cjs.uuidv7, uuidv7);
  assert.equal(cjs.Database, Database);
  assert.ok(importBetterSqlite3() instanceof Promise);
});

test('importBetterSqlite3 resolves to the Database class', async () => {
  assert.equal(await importBetterSqlite3(), Database);
});

test('createStore creates the parent directories and a schema-6 WAL file', (t) => {
  const { store, path } = openStore(t);
  assert.ok(existsSync(path));
  store.close();
  const db = rawDb(t, path);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get(), '6');
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").pluck().all();
  for (const name of ['agents', 'messages', 'role_registry', 'role_candidates', 'human_requests', 'dead_letters', 'assign_jobs', 'reflexion_entries', 'pipeline_state', 'message_inbox', '_meta']) {
    assert.ok(tables.includes(name), name);
  }
});

test('the store is a plain mutable object and accepts options.DatabaseCtor', (t) => {
  const dir = tempDir(t);
  const store = createStore(join(dir, 'a.db'), { DatabaseCtor: function Ignored() {} });
  t.after(() => store.close());
  assert.equal(Object.getPrototypeOf(store), Object.prototype);
  store.type = 'sqlite';
  store.extra = () => 7;
  assert.equal(store.extra(), 7);
  assert.equal(typeof store.uuidv7(), 'string');
});

test('uuidv7 gives strictly increasing version-7 ids', () => {
  let prev = '';
  for (let i = 0; i < 5000; i++) {
    const id = uuidv7();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(id > prev);
    prev = id;
  }
});

test('registerAgent returns the original shape with effective block', (t) => {
  const { store, path } = openStore(t);
  const r = store.registerAgent({ agent_id: 'a1', cli: 'codex', pid: '4242', topics: ['build'], metadata: { team: 'core' } });
  assert.deepEqual(Object.keys(r), ['agent_id', 'lease_id', 'lease_expires_ms', 'server_time_ms', 'effective']);
  assert.deepEqual(Object.keys(r.effective), ['updated', 'online', 'status', 'last_seen_ms', 'lease_expires_ms', 'store_type', 'db_path']);
  assert.equal(r.lease_expires_ms, r.server_time_ms + 30000);
  assert.equal(r.effective.updated, true);
  assert.equal(r.effective.online, true);
  assert.equal(r.effective.db_path, path);
  assert.equal(r.effective.store_type, 'sqlite');
  const agent = store.getAgent('a1');
  assert.deepEqual(Object.keys(agent), [
    'agent_id', 'cli', 'pid', 'last_seen_ms', 'lease_expires_ms', 'status', 'project_id', 'session_id', 'host_id',
    'transport_locators_json', 'capabilities', 'topics', 'metadata',
  ]);
  assert.equal(agent.pid, 4242); // INTEGER affinity converts the numeric string
  assert.equal(agent.transport_locators_json, '[]');
  assert.deepEqual(agent.capabilities, []);
  assert.deepEqual(agent.metadata, { team: 'core' });
});

test('numbers bind as REAL: a numeric agent id is stored as "955.0"', (t) => {
  const { store } = openStore(t);
  const r = store.registerAgent({ agent_id: 955, cli: 'claude' });
  assert.equal(r.agent_id, 955);
  assert.equal(store.getAgent(955).agent_id, '955.0');
  assert.equal(store.getAgent('955'), null);
});

test('registerAgent errors: CHECK, destructuring, binding, BigInt', (t) => {
  const { store } = openStore(t);
  const check = thrown(() => store.registerAgent({ agent_id: 'x', cli: 'bogus' }));
  assert.ok(check instanceof SqliteError);
  assert.ok(check instanceof Error);
  assert.equal(check.name, 'SqliteError');
  assert.equal(check.code, 'SQLITE_CONSTRAINT_CHECK');
  assert.equal(check.message, "CHECK constraint failed: cli IN ('codex','gemini','claude','other')");
  assert.equal(store.getAgent('x'), null);
  assert.equal(thrown(() => store.registerAgent()).message, "Cannot destructure property 'agent_id' of 'undefined' as it is undefined.");
  const bool = thrown(() => store.registerAgent({ agent_id: 'x', cli: 'codex', pid: true }));
  assert.equal(bool.name, 'TypeError');
  assert.equal(bool.message, 'SQLite3 can only bind numbers, strings, bigints, buffers, and null');
  assert.equal(thrown(() => store.registerAgent({ agent_id: 'x', cli: 'codex', metadata: { n: 1n } })).message, 'Do not know how to serialize a BigInt');
  const notNull = thrown(() => store.registerAgent({ agent_id: 'x', cli: 'codex', heartbeat_ttl_ms: NaN }));
  assert.equal(notNull.code, 'SQLITE_CONSTRAINT_NOTNULL');
});

test('positional binding follows better-sqlite3: arrays spread, objects are named', (t) => {
  const { store } = openStore(t);
  const few = thrown(() => store.getAgent({}));
  assert.equal(few.name, 'RangeError');
  assert.equal(few.message, 'Too few parameter values were provided');
  const many = thrown(() => store.getAgent(['a', 'b']));
  assert.equal(many.message, 'Too many parameter values were provided');
  store.registerAgent({ agent_id: 'a', cli: 'codex' });
  assert.equal(store.getAgent(['a']).agent_id, 'a');
  assert.equal(store.getAgent(undefined), null);
  assert.equal(thrown(() => store.getAgent(true)).name, 'TypeError');
});

test('refreshLease revives offline agents and reports unknown ones', (t) => {
  const { store } = openStore(t);
  store.registerAgent({ agent_id: 'a', cli: 'gemini' });
  assert.equal(store.updateAgentStatus('a', 'offline'), true);
  const r = store.refreshLease('a', 60000);
  assert.deepEqual(Object.keys(r), ['agent_id', 'lease_expires_ms', 'server_time_ms', 'effective']);
  assert.deepEqual(Object.keys(r.effective), ['updated', 'store_type', 'db_path']);
  assert.equal(r.lease_expires_ms, r.server_time_ms + 60000);
  assert.equal(store.getAgent('a').status, 'online');
  const unknown = store.refreshLease('nobody');
  assert.equal(unknown.effective.updated, false);
  assert.equal(unknown.lease_expires_ms, unknown.server_time_ms + 30000);
  const zero = store.refreshLease('a', null); // Number(null) === 0: the lease is now
  assert.equal(zero.lease_expires_ms, zero.server_time_ms);
  assert.equal(thrown(() => store.updateAgentStatus('a', 'gone')).code, 'SQLITE_CONSTRAINT_CHECK');
});

test('sweepStaleAgents moves a long-expired agent online -> offline in one sweep', (t) => {
  const { store } = openStore(t);
  store.registerAgent({ agent_id: 'old', cli: 'codex', heartbeat_ttl_ms: -400000 });
  store.registerAgent({ agent_id: 'recent', cli: 'codex', heartbeat_ttl_ms: -1000 });
  store.registerAgent({ agent_id: 'live', cli: 'codex' });
  assert.deepEqual(store.sweepStaleAgents(), { stale: 2, offline: 1 });
  assert.equal(store.getAgent('old').status, 'offline');
  assert.equal(store.getAgent('recent').status, 'stale');
  const online = store.listOnlineAgents().map((a) => a.agent_id).sort();
  assert.deepEqual(online, ['live', 'recent']); // stale agents count as online here
  assert.equal(store.listAllAgents().length, 3);
});

test('topics: duplicates yield the agent twice; corrupt topics_json throws', (t) => {
  const { store, path } = openStore(t);
  store.registerAgent({ agent_id: 'a', cli: 'codex', topics: ['x', 'x', 'y'] });
  assert.equal(store.getAgentsByTopic('x').length, 2);
  assert.equal(store.deliverToTopic('m', 'y'), 1);
  assert.equal(store.updateAgentTopics('a', ['z']), true);
  assert.deepEqual(store.getAgent('a').topics, ['z']);
  assert.equal(store.updateAgentTopics('missing', ['z']), false);
  rawDb(t, path).prepare("UPDATE agents SET topics_json='[bad', metadata_json='nope' WHERE agent_id='a'").run();
  assert.deepEqual(store.getAgent('a').topics, []); // parseJson fallback
  assert.deepEqual(store.getAgent('a').metadata, {});
  const err = thrown(() => store.getAgentsByTopic('z'));
  assert.equal(err.name, 'SqliteError');
  assert.match(err.message, /malformed JSON/);
});

test('auditLog returns payload_json and the caller payload; constraints throw', (t) => {
  const { store, path } = openStore(t);
  const payload = { a: 1, nested: { b: [1, 2] } };
  const m = store.auditLog({ type: 'event', from: 'a', to: 'topic:t', topic: 't', payload, correlation_id: '' });
  assert.deepEqual(Object.keys(m), [
    'id', 'type', 'from_agent', 'to_agent', 'topic', 'priority', 'ttl_ms', 'created_at_ms', 'expires_at_ms',
    'correlation_id', 'trace_id', 'payload_json', 'status', 'role_key_wire', 'payload',
  ]);
  assert.equal(m.payload, payload);
  assert.equal(m.payload_json, JSON.stringify(payload));
  assert.equal(m.expires_at_ms, m.created_at_ms + 300000);
  assert.match(m.correlation_id, /^[0-9a-f-]{36}$/); // '' || uuidv7()
  assert.equal(m.status, 'queued');
  assert.equal(m.role_key_wire, null);
  const stored = store.getMessage(m.id);
  assert.deepEqual(stored.payload, payload);
  assert.equal(Object.keys(stored).at(-1), 'payload');
  assert.equal(store.enqueueMessage({ type: 'request', from: 'a', to: 'b', topic: 't', priority: '7' }).priority, '7');
  const pri = thrown(() => store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 10 }));
  assert.equal(pri.code, 'SQLITE_CONSTRAINT_CHECK');
  assert.equal(pri.message, 'CHECK constraint failed: priority BETWEEN 1 AND 9');
  assert.equal(thrown(() => store.auditLog({ type: 'nope', from: 'a', to: 'b', topic: 't' })).code, 'SQLITE_CONSTRAINT_CHECK');
  assert.equal(thrown(() => store.auditLog(null)).message, "Cannot destructure property 'type' of 'object null' as it is null.");
  const raw = rawDb(t, path);
  raw.prepare("UPDATE messages SET payload_json='{\"truncated\":' WHERE id=?").run(m.id);
  assert.deepEqual(store.getMessage(m.id).payload, {});
  raw.prepare("UPDATE messages SET payload_json='null' WHERE id=?").run(m.id);
  assert.equal(store.getMessage(m.id).payload, null); // stored 'null' parses to null
});

test('a lone surrogate is stored as better-sqlite3 stores it on this Node and reads back as V8 decodes those bytes', (t) => {
  const { store, path } = openStore(t);
  const m = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 'x\ud800y', payload: { s: '\udc00' } });
  assert.equal(m.topic, 'x\ud800y');
  const stored = loneSurrogateHex();
  assert.ok(['EDA080', 'EFBFBD'].includes(stored), stored);
  // Its own three bytes (up to Node 23) read back as three U+FFFD; U+FFFD (Node 24 on) as one.
  assert.equal(store.getMessage(m.id).topic, stored === 'EDA080' ? 'x\ufffd\ufffd\ufffdy' : 'x\ufffdy');
  assert.equal(store.getMessage(m.id).payload.s, '\udc00'); // JSON.stringify escaped it
  assert.equal(rawDb(t, path).prepare('SELECT hex(topic) FROM messages WHERE id=?').pluck().get(m.id), `78${stored}79`);
});

test('message lookups: by correlation, by trace, status updates', (t) => {
  const { store } = openStore(t);
  const req = store.auditLog({ type: 'request', from: 'a', to: 'b', topic: 't', correlation_id: 'c1', trace_id: 'tr' });
  nextMs();
  const res = store.auditLog({ type: 'response', from: 'b', to: 'a', topic: 't', correlation_id: 'c1', trace_id: 'tr', payload: { ok: true } });
  assert.equal(store.getResponseByCorrelation('c1').id, res.id);
  assert.equal(store.getResponseByCorrelation('none'), null);
  assert.deepEqual(store.getMessagesByTrace('tr').map((m) => m.id), [req.id, res.id]);
  assert.equal(store.updateMessageStatus(req.id, 'acked'), true);
  assert.equal(store.updateMessageStatus('missing', 'acked'), false);
  assert.equal(thrown(() => store.updateMessageStatus(req.id, 'lost')).code, 'SQLITE_CONSTRAINT_CHECK');
  assert.equal(store.deliverToAgent(req.id, 'b'), true);
  assert.equal(store.deliverToAgent(req.id, ''), false);
  assert.equal(store.deliverToAgent('missing', 'b'), false);
  assert.equal(store.ackMessages(['x'], 'b'), 0);
  assert.deepEqual(store.getDeliveryStats(), { total_deliveries: 1, avg_delivery_ms: 0 });
});

test('getAuditMessagesForAgent: clamps, topic fallback, topic column matching', (t) => {
  const { store } = openStore(t);
  store.registerAgent({ agent_id: 'me', cli: 'codex', topics: ['build'] });
  for (let i = 0; i < 3; i++) {
    store.auditLog({ type: 'event', from: 'x', to: 'me', topic: 'direct' });
    nextMs();
  }
  const broadcast = store.auditLog({ type: 'event', from: 'x', to: 'topic:build', topic: 'build' }).id;
  store.auditLog({ type: 'event', from: 'x', to: 'topic:other', topic: 'other' });
  store.auditLog({ type: 'event', from: 'x', to: 'topic:deploy', topic: 'build-not' });
  const all = store.getAuditMessagesForAgent('me');
  assert.equal(all.length, 4);
  assert.ok(all.some((m) => m.id === broadcast)); // agent topics used when include_topics is absent
  assert.equal(store.getAuditMessagesForAgent('me', { max_messages: null }).length, 1); // Number(null) -> clamp to 1
  assert.equal(store.getAuditMessagesForAgent('me', { max_messages: 'abc' }).length, 4); // non-finite -> 20
  assert.equal(store.getAuditMessagesForAgent('me', { max_messages: 2.9 }).length, 2);
  assert.equal(store.getAuditMessagesForAgent('me', { include_topics: ['other'] }).length, 4);
  assert.equal(store.pollForAgent('me', { include_topics: ['nothing'] }).length, 3);
  const newest = store.getAuditMessagesForAgent('me');
  assert.ok(newest[0].created_at_ms >= newest.at(-1).created_at_ms);
  assert.equal(thrown(() => store.getAuditMessagesForAgent('me', null)).message, "Cannot read properties of null (reading 'max_messages')");
});

test('human requests: absolute deadline, falsy responses dropped, expiry', (t) => {
  const { store } = openStore(t);
  const r = store.insertHumanRequest({ requester_agent: 'a', kind: 'approval', prompt: 'ok?', deadline_ms: 60000, default_action: 'decline' });
  assert.deepEqual(Object.keys(r), ['request_id', 'state', 'deadline_ms']);
  assert.equal(r.state, 'pending');
  const row = store.getHumanRequest(r.request_id);
  assert.deepEqual(Object.keys(row).slice(-2), ['schema', 'response']);
  assert.deepEqual(row.schema, {});
  assert.equal(row.response, null);
  assert.equal(row.deadline_ms, r.deadline_ms);
  assert.equal(store.updateHumanRequest(r.request_id, 'accepted', 0), true);
  assert.equal(store.getHumanRequest(r.request_id).response, null);
  assert.equal(store.updateHumanRequest(r.request_id, 'accepted', { answer: 'yes' }), true);
  assert.deepEqual(store.getHumanRequest(r.request_id).response, { answer: 'yes' });
  assert.equal(thrown(() => store.updateHumanRequest(r.request_id, 'maybe')).code, 'SQLITE_CONSTRAINT_CHECK');
  const missing = thrown(() => store.insertHumanRequest({ requester_agent: 'a', kind: 'text', prompt: 'p', default_action: 'cancel' }));
  assert.equal(missing.message, 'NOT NULL constraint failed: human_requests.deadline_ms');
  store.insertHumanRequest({ requester_agent: 'a', kind: 'text', prompt: 'late', deadline_ms: -1000, default_action: 'cancel' });
  assert.equal(store.getPendingHumanRequests().length, 1);
  assert.equal(store.expireHumanRequests(), 1);
  assert.equal(store.getPendingHumanRequests().length, 0);
});

test('dead letters and sweepExpired', (t) => {
  const { store } = openStore(t);
  const m = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
  assert.equal(store.moveToDeadLetter(m.id, 'manual', 'boom'), true);
  assert.equal(store.getMessage(m.id).status, 'dead_letter');
  nextMs();
  assert.equal(store.moveToDeadLetter('ghost', 'orphan'), true); // written even without a message
  const dl = store.getDeadLetters();
  assert.deepEqual(dl.map((d) => d.message_id), ['ghost', m.id]);
  assert.deepEqual(Object.keys(dl[0]), ['message_id', 'reason', 'failed_at_ms', 'last_error']);
  assert.equal(store.getDeadLetters(1).length, 1);
  assert.equal(thrown(() => store.getDeadLetters('abc')).code, 'SQLITE_MISMATCH');
  assert.equal(thrown(() => store.moveToDeadLetter(m.id, null)).code, 'SQLITE_CONSTRAINT_NOTNULL');
  const expired = store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', ttl_ms: -5 });
  store.insertHumanRequest({ requester_agent: 'a', kind: 'text', prompt: 'p', deadline_ms: -5, default_action: 'cancel' });
  assert.deepEqual(store.sweepExpired(), { messages: 1, human_requests: 1 });
  assert.equal(store.getDeadLetters().find((d) => d.message_id === expired.id).reason, 'ttl_expired');
  assert.deepEqual(store.getQueueDepths(), { urgent: 0, normal: 0, dlq: 3 });
});

test('stats have the original keys in order', (t) => {
  const { store } = openStore(t);
  store.registerAgent({ agent_id: 'a', cli: 'codex' });
  store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 8 });
  store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't', priority: 3 });
  assert.deepEqual(store.getQueueDepths(), { urgent: 1, normal: 1, dlq: 0 });
  assert.deepEqual(Object.keys(store.getHubStats()), ['online_agents', 'total_messages', 'active_assign_jobs', 'urgent', 'normal', 'dlq']);
  assert.deepEqual(store.getHubStats(), { online_agents: 1, total_messages: 2, active_assign_jobs: 0, urgent: 1, normal: 1, dlq: 0 });
  assert.deepEqual(Object.keys(store.getAuditStats()), ['online_agents', 'total_messages', 'dlq', 'assign_queued', 'assign_running', 'assign_failed', 'assign_timed_out']);
});

test('close is idempotent and later calls throw the better-sqlite3 TypeError', (t) => {
  const { store, path } = openStore(t);
  store.registerAgent({ agent_id: 'kept', cli: 'codex' });
  store.close();
  store.close();
  const err = thrown(() => store.getAgent('kept'));
  assert.equal(err.name, 'TypeError');
  assert.equal(err.message, 'The database connection is not open');
  const again = createStore(path);
  t.after(() => again.close());
  assert.equal(again.getAgent('kept').agent_id, 'kept'); // acknowledged data survives reopen
});

test('a v5 file migrates: warning, columns appended, rows kept', (t) => {
  const path = fixtureCopy(t, 'hub-v5.db');
  const { value: store, warnings } = captureWarnings(() => createStore(path));
  t.after(() => store.close());
  assert.deepEqual(warnings, ['[store] schema version mismatch: found=5 expected=6. Applying schema.sql (idempotent).']);
  const agents = store.listAllAgents();
  assert.equal(agents.length, 4);
  const legacy = store.getAgent('legacy-agent');
  assert.equal(legacy.pid, 42);
  assert.deepEqual(legacy.metadata, { kept: true });
  assert.deepEqual(Object.keys(legacy).slice(6, 10), ['project_id', 'session_id', 'host_id', 'transport_locators_json']);
  assert.deepEqual(store.getAgent('legacy-corrupt').capabilities, []);
  assert.equal(store.getMessage('legacy-message').role_key_wire, null);
  store.close();
  const db = rawDb(t, path);
  assert.equal(db.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get(), '6');
  const cols = db.prepare('PRAGMA table_info(messages)').all().map((c) => c.name);
  assert.equal(cols.at(-1), 'role_key_wire');
  // Reopening a migrated file is silent.
  const { value: reopened, warnings: none } = captureWarnings(() => createStore(path));
  reopened.close();
  assert.deepEqual(none, []);
});

test('a v4 file migrates: dispatched_at_ms lands last, before the parsed fields', (t) => {
  const path = fixtureCopy(t, 'hub-v4.db');
  const { value: store, warnings } = captureWarnings(() => createStore(path));
  t.after(() => store.close());
  assert.deepEqual(warnings, ['[store] schema version mismatch: found=4 expected=6. Applying schema.sql (idempotent).']);
  assert.equal(store.listAllAgents().length, 2);
  assert.equal(store.getDeadLetters(100).length, 1);
  assert.equal(store.getPendingHumanRequests().length, 1);
  store.close();
  const cols = rawDb(t, path).prepare('PRAGMA table_info(assign_jobs)').all().map((c) => c.name);
  assert.deepEqual(cols.slice(-2), ['last_retry_at_ms', 'dispatched_at_ms']);
});

test('opening a file that is not a database throws SqliteError synchronously', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'junk.db');
  require('node:fs').writeFileSync(path, 'this is not a database file, just text, long enough to have a header...');
  const err = thrown(() => createStore(path));
  assert.equal(err.name, 'SqliteError');
  assert.equal(err.code, 'SQLITE_NOTADB');
});
