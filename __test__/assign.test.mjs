// Assign jobs: field rules of createAssign/updateAssignStatus/retryAssign/listAssigns and
// the status listeners.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createStore } from '../index.mjs';
import { sqlInChild } from './helpers.mjs';

const require = createRequire(import.meta.url);


function fresh(t) {
  const dir = mkdtempSync(join(tmpdir(), 'tfx-assign-'));
  const dbPath = join(dir, 'nested', 'hub.db');
  const store = createStore(dbPath);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, dbPath };
}

const base = { supervisor_agent: 'sup', worker_agent: 'wrk' };

test('createAssign defaults and key order', (t) => {
  const { store } = fresh(t);
  const before = Date.now();
  const job = store.createAssign({ ...base, payload: { x: 1 } });
  assert.deepEqual(Object.keys(job), [
    'job_id', 'supervisor_agent', 'worker_agent', 'topic', 'task', 'status', 'attempt', 'retry_count',
    'max_retries', 'priority', 'ttl_ms', 'timeout_ms', 'deadline_ms', 'trace_id', 'correlation_id',
    'last_message_id', 'created_at_ms', 'updated_at_ms', 'started_at_ms', 'dispatched_at_ms',
    'completed_at_ms', 'last_retry_at_ms', 'payload', 'result', 'error',
  ]);
  assert.match(job.job_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  assert.equal(job.topic, 'assign.job');
  assert.equal(job.task, '');
  assert.equal(job.status, 'queued');
  assert.equal(job.attempt, 1);
  assert.equal(job.priority, 5);
  assert.equal(job.ttl_ms, 600000);
  assert.equal(job.timeout_ms, 600000);
  assert.ok(job.deadline_ms >= before + 600000);
  assert.equal(job.started_at_ms, null);
  assert.equal(job.completed_at_ms, null);
  assert.equal(job.last_retry_at_ms, null);
  assert.deepEqual(job.payload, { x: 1 });
  assert.equal(job.result, null);
  assert.deepEqual(store.getAssign(job.job_id), job);
  assert.equal(store.getAssign('missing'), null);
});

test('createAssign clamps: Number(null) === 0 and the fallbacks', (t) => {
  const { store } = fresh(t);
  const now = Date.now();
  const a = store.createAssign({ ...base, timeout_ms: null, priority: null, deadline_ms: null });
  assert.equal(a.timeout_ms, 1000); // null -> 0 -> floor
  assert.equal(a.ttl_ms, 600000);
  assert.equal(a.priority, 1);
  assert.equal(a.deadline_ms, 0); // already due
  const b = store.createAssign({ ...base, timeout_ms: 1e12, ttl_ms: 'abc', priority: 15 });
  assert.equal(b.timeout_ms, 86400000);
  assert.equal(b.ttl_ms, 86400000); // falls back to the clamped timeout
  assert.equal(b.priority, 9);
  const c = store.createAssign({ ...base, timeout_ms: NaN, ttl_ms: 999, priority: 7.9, deadline_ms: '12345.9' });
  assert.equal(c.timeout_ms, 600000);
  assert.equal(c.ttl_ms, 1000);
  assert.equal(c.priority, 7);
  assert.equal(c.deadline_ms, 12345);
  const d = store.createAssign({ ...base, priority: -4, timeout_ms: 10, attempt: 0, retry_count: '2', max_retries: -1 });
  assert.equal(d.priority, 1);
  assert.equal(d.timeout_ms, 1000);
  assert.ok(d.deadline_ms >= now + 1000 && d.deadline_ms < now + 60000);
  assert.equal(d.attempt, 1);
  assert.equal(d.retry_count, 2);
  assert.equal(d.max_retries, 0);
  assert.ok(d.last_retry_at_ms >= now); // raw '2' > 0
});

test('createAssign topic/task/payload coercions and timestamps by status', (t) => {
  const { store } = fresh(t);
  const a = store.createAssign({ ...base, topic: '', task: null, payload: null, status: 'running', dispatched_at_ms: '100' });
  assert.equal(a.topic, 'assign.job');
  assert.equal(a.task, '');
  assert.deepEqual(a.payload, {});
  assert.equal(a.started_at_ms, a.created_at_ms);
  assert.equal(a.dispatched_at_ms, 100);
  const b = store.createAssign({ ...base, topic: 42, task: 7, status: 'failed', dispatched_at_ms: 'soon', result: { ok: true } });
  assert.equal(b.topic, '42');
  assert.equal(b.task, '7');
  assert.equal(b.completed_at_ms, b.created_at_ms);
  assert.equal(b.dispatched_at_ms, null);
  assert.deepEqual(b.result, { ok: true });
});

test('createAssign errors', (t) => {
  const { store } = fresh(t);
  assert.throws(() => store.createAssign(), { name: 'TypeError', message: "Cannot destructure property 'job_id' of 'undefined' as it is undefined." });
  assert.throws(() => store.createAssign({ ...base, status: 'paused' }), { name: 'SqliteError', code: 'SQLITE_CONSTRAINT_CHECK' });
  assert.throws(() => store.createAssign({ worker_agent: 'w' }), { message: 'NOT NULL constraint failed: assign_jobs.supervisor_agent' });
  assert.throws(() => store.createAssign({ ...base, payload: { n: 9n } }), { name: 'TypeError', message: 'Do not know how to serialize a BigInt' });
  store.createAssign({ ...base, job_id: 'dup' });
  assert.throws(() => store.createAssign({ ...base, job_id: 'dup' }), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
});

test('updateAssignStatus: ?? fields, hasOwn fields, clamps', (t) => {
  const { store } = fresh(t);
  const job = store.createAssign({ ...base, payload: { p: 1 }, result: { r: 1 }, last_message_id: 'm1' });
  // null status keeps the current one; ?? ignores null patch values
  let u = store.updateAssignStatus(job.job_id, null, { task: 'renamed', worker_agent: null, priority: 0, attempt: 0, timeout_ms: 5 });
  assert.equal(u.status, 'queued');
  assert.equal(u.task, 'renamed');
  assert.equal(u.worker_agent, 'wrk');
  assert.equal(u.priority, 1);
  assert.equal(u.attempt, 1);
  assert.equal(u.timeout_ms, 1000);
  assert.deepEqual(u.result, { r: 1 }); // absent: kept (re-stringified)
  assert.deepEqual(u.payload, { p: 1 });
  // explicit null through hasOwn
  u = store.updateAssignStatus(job.job_id, 'queued', { last_message_id: null, result: null, deadline_ms: null });
  assert.equal(u.last_message_id, null);
  assert.equal(u.result, null);
  assert.equal(u.deadline_ms, null);
  // present-but-undefined counts as present for hasOwn
  u = store.updateAssignStatus(job.job_id, '', { error: { code: 'E' }, result: undefined, retry_count: -2, max_retries: '4' });
  assert.deepEqual(u.error, { code: 'E' });
  assert.equal(u.result, null);
  assert.equal(u.retry_count, 0);
  assert.equal(u.max_retries, 4);
  // running without a deadline sets now + T; deadline given is truncated; NaN gives null
  u = store.updateAssignStatus(job.job_id, 'running');
  assert.ok(u.deadline_ms > Date.now() + 500);
  assert.ok(u.started_at_ms > 0);
  u = store.updateAssignStatus(job.job_id, 'running', { deadline_ms: 4242.7 });
  assert.equal(u.deadline_ms, 4242);
  u = store.updateAssignStatus(job.job_id, 'running', { deadline_ms: 'abc' });
  assert.equal(u.deadline_ms, null);
  // values from the patch are bound as given
  u = store.updateAssignStatus(job.job_id, 'running', { started_at_ms: 42.5, dispatched_at_ms: 43, last_retry_at_ms: 44 });
  assert.equal(u.started_at_ms, 42.5);
  assert.equal(u.dispatched_at_ms, 43);
  assert.equal(u.last_retry_at_ms, 44);
  // terminal: deadline cleared, completed set
  u = store.updateAssignStatus(job.job_id, 'succeeded', { ttl_ms: 1, priority: '8' });
  assert.equal(u.deadline_ms, null);
  assert.ok(u.completed_at_ms > 0);
  assert.equal(u.ttl_ms, 1000);
  assert.equal(u.priority, 8);
  assert.equal(store.updateAssignStatus('missing', 'running'), null);
  assert.throws(() => store.updateAssignStatus(job.job_id, 'bogus'), { code: 'SQLITE_CONSTRAINT_CHECK' });
  assert.throws(() => store.updateAssignStatus(job.job_id, 'running', { worker_agent: true }), {
    name: 'TypeError',
    message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null',
  });
  assert.throws(() => store.updateAssignStatus(job.job_id, 'running', null), { message: "Cannot read properties of null (reading 'timeout_ms')" });
});

test('retryAssign clears result, keeps or replaces error, bumps counters', (t) => {
  const { store } = fresh(t);
  const job = store.createAssign({ ...base, status: 'failed', result: { partial: 1 }, error: { code: 'E1' }, retry_count: 2 });
  let r = store.retryAssign(job.job_id);
  assert.equal(r.status, 'queued');
  assert.equal(r.result, null);
  assert.deepEqual(r.error, { code: 'E1' });
  assert.equal(r.retry_count, 3);
  assert.equal(r.attempt, 2);
  assert.equal(r.completed_at_ms, null);
  assert.equal(r.started_at_ms, null);
  assert.equal(r.dispatched_at_ms, null);
  assert.equal(r.last_message_id, null);
  assert.ok(r.last_retry_at_ms > 0);
  r = store.retryAssign(job.job_id, { error: null, attempt: 99, retry_count: 'x', timeout_ms: 1e12, ttl_ms: 5, result: { again: true } });
  assert.equal(r.error, null);
  assert.equal(r.attempt, 99);
  assert.equal(r.retry_count, 0);
  assert.equal(r.timeout_ms, 86400000);
  assert.equal(r.ttl_ms, 1000);
  assert.deepEqual(r.result, { again: true });
  r = store.retryAssign(job.job_id, { attempt: 1 });
  assert.equal(r.attempt, 100); // max(current + 1, ...)
  assert.equal(store.retryAssign('missing'), null);
});

test('listAssigns filters and limit clamps', (t) => {
  const { store } = fresh(t);
  for (let i = 0; i < 4; i++) store.createAssign({ ...base, worker_agent: `w${i % 2}`, status: i === 3 ? 'running' : 'queued', deadline_ms: 1000 * (i + 1) });
  assert.equal(store.listAssigns().length, 4);
  assert.equal(store.listAssigns({ limit: 2 }).length, 2);
  assert.equal(store.listAssigns({ limit: 0 }).length, 1);
  assert.equal(store.listAssigns({ limit: null }).length, 1);
  assert.equal(store.listAssigns({ limit: -5 }).length, 1);
  assert.equal(store.listAssigns({ limit: 'abc' }).length, 4);
  assert.equal(store.listAssigns({ limit: 2.7 }).length, 2);
  assert.equal(store.listAssigns({ worker_agent: 'w1' }).length, 2);
  assert.equal(store.listAssigns({ supervisor_agent: '' }).length, 4); // falsy: ignored
  assert.equal(store.listAssigns({ status: 'running' }).length, 1);
  assert.equal(store.listAssigns({ statuses: ['queued', 'running'] }).length, 4);
  assert.equal(store.listAssigns({ statuses: [], status: 'running' }).length, 1);
  assert.equal(store.listAssigns({ active_before_ms: 2000 }).length, 2);
  assert.equal(store.listAssigns({ active_before_ms: null }).length, 0); // Number(null) = 0
  assert.equal(store.listAssigns({ active_before_ms: 'abc' }).length, 4);
  // updated_at_ms DESC
  const all = store.listAssigns();
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].updated_at_ms >= all[i].updated_at_ms);
  // filter values are bound, never pasted
  assert.equal(store.listAssigns({ worker_agent: "w1' OR '1'='1" }).length, 0);
  assert.throws(() => store.listAssigns(null), { name: 'TypeError' });
});

test('listeners: order, snapshot, exceptions swallowed, dedup, unsubscribe inside a callback', (t) => {
  const { store } = fresh(t);
  const seen = [];
  const l1 = (event, row) => seen.push(['l1', event, row]);
  const thrower = () => {
    seen.push(['thrower']);
    throw new Error('boom');
  };
  let unsubL4;
  const l3 = () => {
    seen.push(['l3']);
    unsubL4();
  };
  const l4 = () => seen.push(['l4']);
  const un1 = store.onAssignStatusChange(l1);
  store.onAssignStatusChange(l1); // a Set: counted once
  store.onAssignStatusChange(thrower);
  store.onAssignStatusChange(l3);
  unsubL4 = store.onAssignStatusChange(l4);
  const noop = store.onAssignStatusChange('not a function');
  assert.equal(typeof noop, 'function');
  assert.equal(noop(), undefined);

  const job = store.createAssign({ ...base, error: { code: 'E' } });
  // l4 still runs this time: iteration is over a snapshot
  assert.deepEqual(seen.map((s) => s[0]), ['l1', 'thrower', 'l3', 'l4']);
  const [, event, row] = seen[0];
  assert.equal(row, job); // the very object returned
  assert.deepEqual(Object.keys(event), ['job_id', 'status', 'result', 'timestamp']);
  assert.deepEqual(event.result, { code: 'E' }); // result ?? error
  assert.equal(event.timestamp, new Date(job.updated_at_ms).toISOString());

  seen.length = 0;
  store.updateAssignStatus(job.job_id, 'queued', { task: 'same status' });
  assert.equal(seen.length, 0); // no status change, no event
  store.updateAssignStatus(job.job_id, 'running');
  assert.deepEqual(seen.map((s) => s[0]), ['l1', 'thrower', 'l3']); // l4 was unsubscribed
  seen.length = 0;
  un1();
  store.retryAssign(job.job_id);
  assert.deepEqual(seen.map((s) => s[0]), ['thrower', 'l3']);
});

test('corrupt stored JSON falls back and is normalised on update', (t) => {
  const { store, dbPath } = fresh(t);
  const job = store.createAssign({ ...base, result: { a: 1 } });
  sqlInChild(dbPath, "UPDATE assign_jobs SET payload_json='{bad', result_json='{ \"b\" : 1.50 }', error_json='nope' WHERE job_id=?", [job.job_id]);
  const got = store.getAssign(job.job_id);
  assert.deepEqual(got.payload, {});
  assert.deepEqual(got.result, { b: 1.5 });
  assert.equal(got.error, null);
  store.updateAssignStatus(job.job_id, 'running');
  const row = sqlInChild(dbPath, 'SELECT payload_json, result_json, error_json FROM assign_jobs WHERE job_id=?', [job.job_id]);
  assert.deepEqual(row, { payload_json: '{}', result_json: '{"b":1.5}', error_json: null });
});

test('stored result JSON is re-stringified exactly like JSON.stringify(JSON.parse(text))', (t) => {
  const { store, dbPath } = fresh(t);
  const texts = [
    '{"b":1,"a":[1.5,2e3,"\\u0041",-0,1e21,0.000001,1e-7,123456789012345678]}',
    '{"1":1,"a":2,"0":3}',
    '{"a":1,"a":2}',
    '"\\ud83d\\ude00 \\ud800 \\u001f \\/"',
    '  [ ]  ',
    'true',
    '{"x":583.723,"y":"caf\u00e9","z":{"k":[null,false]}}',
    '0.1',
    '1.0',
  ];
  for (const text of texts) {
    const job = store.createAssign({ ...base, result: 1 });
    sqlInChild(dbPath, 'UPDATE assign_jobs SET result_json=? WHERE job_id=?', [text, job.job_id]);
    store.updateAssignStatus(job.job_id, 'running');
    const row = sqlInChild(dbPath, 'SELECT result_json FROM assign_jobs WHERE job_id=?', [job.job_id]);
    assert.equal(row.result_json, JSON.stringify(JSON.parse(text)), text);
  }
});

test('a BLOB bound from a patch comes back as a Buffer, with the status-change flag intact', (t) => {
  const { store } = fresh(t);
  const job = store.createAssign(base);
  const events = [];
  store.onAssignStatusChange((event) => events.push(event.status));
  const u = store.updateAssignStatus(job.job_id, 'running', { dispatched_at_ms: Buffer.from('ab') });
  assert.ok(Buffer.isBuffer(u.dispatched_at_ms));
  assert.equal(u.dispatched_at_ms.toString(), 'ab');
  assert.deepEqual(events, ['running']);
  const again = store.updateAssignStatus(job.job_id, 'running', { task: 't' });
  assert.ok(Buffer.isBuffer(again.dispatched_at_ms));
  assert.deepEqual(events, ['running']);
});

test('CommonJS entry gives the same store', (t) => {
  const cjs = require('../index.cjs');
  const dir = mkdtempSync(join(tmpdir(), 'tfx-assign-cjs-'));
  const store = cjs.createStore(join(dir, 'hub.db'));
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const job = store.createAssign({ ...base, priority: '3' });
  assert.equal(job.priority, 3);
  assert.equal(store.listAssigns({ status: 'queued' }).length, 1);
});
