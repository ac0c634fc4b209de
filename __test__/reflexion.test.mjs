// Reflexion memory: add/find/hit/list/patch/delete/prune, including findReflexion's
// LIKE escaping and context-key handling (bound JSON paths, no SQL injection).
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
  const dir = mkdtempSync(join(tmpdir(), 'tfx-reflexion-'));
  const dbPath = join(dir, 'hub.db');
  const store = createStore(dbPath);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, dbPath };
}

const e = (error_pattern, extra = {}) => ({ error_pattern, error_message: 'm', solution: 's', ...extra });

test('addReflexion defaults, key order and NOT NULL errors', (t) => {
  const { store } = fresh(t);
  const r = store.addReflexion(e('p', { context: { file: 'a.js' } }));
  assert.deepEqual(Object.keys(r), [
    'id', 'type', 'error_pattern', 'error_message', 'solution', 'solution_code', 'confidence', 'hit_count',
    'success_count', 'last_hit_ms', 'created_at_ms', 'updated_at_ms', 'context', 'adaptive_state',
  ]);
  assert.equal(r.type, 'reflexion');
  assert.equal(r.confidence, 0.5);
  assert.equal(r.hit_count, 1);
  assert.equal(r.success_count, 0);
  assert.equal(r.solution_code, null);
  assert.deepEqual(r.context, { file: 'a.js' });
  assert.deepEqual(r.adaptive_state, {});
  assert.deepEqual(store.getReflexion(r.id), r);
  assert.equal(store.getReflexion('none'), null);
  const old = store.addReflexion(e('old', { updated_at_ms: 5000, created_at_ms: 5000, last_hit_ms: 5000 }));
  assert.equal(old.updated_at_ms, 5000);
  assert.throws(() => store.addReflexion({ error_message: 'm', solution: 's' }), { message: 'NOT NULL constraint failed: reflexion_entries.error_pattern' });
  assert.throws(() => store.addReflexion(e('p', { type: null })), { code: 'SQLITE_CONSTRAINT_NOTNULL' });
  assert.throws(() => store.addReflexion(e('p', { context: { b: 1n } })), { message: 'Do not know how to serialize a BigInt' });
  assert.throws(() => store.addReflexion(), { message: "Cannot read properties of undefined (reading 'type')" });
});

test('findReflexion: exact first, then LIKE with escaped metacharacters', (t) => {
  const { store } = fresh(t);
  store.addReflexion(e('TypeError: x is undefined'));
  store.addReflexion(e('100% failed'));
  store.addReflexion(e('snake_case_name'));
  store.addReflexion(e('C:\\path\\to'));
  store.addReflexion(e('TypeError: Ébc'));
  assert.equal(store.findReflexion('TypeError: x is undefined').length, 1);
  assert.equal(store.findReflexion('typeerror').length, 2); // LIKE is ASCII case-insensitive
  assert.equal(store.findReflexion('ébc').length, 0); // ...but not for non-ASCII
  assert.equal(store.findReflexion('%').length, 1); // % is literal
  assert.equal(store.findReflexion('_').length, 1); // _ is literal
  assert.equal(store.findReflexion('snake%case').length, 0);
  assert.equal(store.findReflexion('\\').length, 1);
  assert.equal(store.findReflexion('').length, 5);
  for (let i = 0; i < 12; i++) store.addReflexion(e(`common failure ${i}`, { confidence: i / 20 }));
  const rows = store.findReflexion('common failure');
  assert.equal(rows.length, 10); // LIMIT 10
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].confidence >= rows[i].confidence);
});

test('findReflexion: the 100-unit cut of the escaped pattern can leave a trailing escape', (t) => {
  const { store } = fresh(t);
  const long = 'a'.repeat(99) + '%';
  store.addReflexion(e(long));
  // escaped is 99 'a' + '\\%' + 'xyz'; cut at 100 leaves a trailing backslash that escapes the final %
  const hits = store.findReflexion('a'.repeat(99) + '%xyz');
  assert.equal(hits.length, 1);
  assert.equal(hits[0].error_pattern, long);
});

test('findReflexion: context filters with bound JSON paths', (t) => {
  const { store } = fresh(t);
  store.addReflexion(e('TypeError: x', { context: { file: 'a.js', cli: 'codex', line: 10 } }));
  store.addReflexion(e('TypeError: y', { context: { 'a.b': 1, nested: { k: 'v' }, "q'x": 2 } }));
  assert.equal(store.findReflexion('TypeError: x', { file: 'a.js', cli: 'codex' }).length, 1);
  assert.equal(store.findReflexion('x', { file: 'a.js' }).length, 1); // LIKE path with context
  assert.equal(store.findReflexion('TypeError', { line: 10 }).length, 1);
  assert.equal(store.findReflexion('TypeError', { line: '10' }).length, 0); // string vs number
  assert.equal(store.findReflexion('TypeError', { file: 'b.js' }).length, 0);
  assert.equal(store.findReflexion('TypeError', { file: 'a.js', flag: null, x: undefined }).length, 1);
  assert.equal(store.findReflexion('TypeError', { 'a.b': 1 }).length, 0); // dotted key = nested path
  assert.equal(store.findReflexion('TypeError', { 'nested.k': 'v' }).length, 1);
  assert.throws(() => store.findReflexion('x', null), { name: 'TypeError', message: 'Cannot convert undefined or null to object' });
  assert.throws(() => store.findReflexion('TypeError', { '': 1 }), { name: 'SqliteError', message: "bad JSON path: '$.'" });
  assert.throws(() => store.findReflexion('x', { flag: true }), { name: 'TypeError', message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null' });
  assert.throws(() => store.findReflexion('x', { file: { a: 1 } }), { name: 'RangeError', message: 'Too few parameter values were provided' });
  assert.throws(() => store.findReflexion(), { message: "Cannot read properties of undefined (reading 'replace')" });
  assert.throws(() => store.findReflexion(42), { message: 'errorPattern.replace is not a function' });
});

test('findReflexion: context keys cannot inject SQL', (t) => {
  const { store } = fresh(t);
  store.addReflexion(e('secret', { context: { file: 'a.js' } }));
  // The original's SQL for this key was a syntax error at `b`; the same error, no SQL built.
  assert.throws(() => store.findReflexion('x', { "a'b": 1 }), { name: 'SqliteError', code: 'SQLITE_ERROR', message: 'near "b": syntax error' });
  // Keys that injected in the original now only name a (missing) JSON path.
  assert.deepEqual(store.findReflexion('secret', { "a') = ? OR 1=1 --": 1 }), []);
  assert.deepEqual(store.findReflexion('zzz', { "file') IS NOT NULL OR ('": 1 }), []);
  assert.deepEqual(store.findReflexion('secret', { 'x) OR 1=1; DROP TABLE reflexion_entries; --': 1 }), []);
  assert.equal(store.findReflexion('secret').length, 1); // table intact
});

test('updateReflexionHit recalculates confidence', (t) => {
  const { store } = fresh(t);
  const r = store.addReflexion(e('p'));
  let u = store.updateReflexionHit(r.id); // hit 2, success 0: 0*0.2 + 0.5*0.8
  assert.equal(u.hit_count, 2);
  assert.ok(Math.abs(u.confidence - 0.4) < 1e-12);
  u = store.updateReflexionHit(r.id, 'yes'); // truthy: hit 3, success 1
  assert.equal(u.success_count, 1);
  assert.equal(u.confidence, (1 / 3) * 0.3 + 0.5 * (1 - 0.3));
  const neg = store.addReflexion(e('q', { hit_count: -5, success_count: 30 }));
  u = store.updateReflexionHit(neg.id, true); // hit -4: not > 0, confidence untouched
  assert.equal(u.confidence, 0.5);
  const big = store.addReflexion(e('z', { hit_count: 9, success_count: 30 }));
  u = store.updateReflexionHit(big.id, true); // 31/10 > 1 -> clamped
  assert.equal(u.confidence, 1);
  assert.equal(store.updateReflexionHit('none', true), null);
});

test('listReflexion filters, including string minConfidence', (t) => {
  const { store } = fresh(t);
  store.addReflexion(e('a', { confidence: 0.9, type: 'adaptive', adaptive_state: { project_slug: 'proj-a' } }));
  store.addReflexion(e('b', { confidence: 0.3 }));
  store.addReflexion(e('c', { confidence: 0.6, adaptive_state: { project_slug: 'proj-b' } }));
  const h = store.addReflexion(e('d'));
  store.patchReflexion(h.id, { confidence: 'high' }); // stored as TEXT in a REAL column
  assert.deepEqual(store.listReflexion().map((r) => r.error_pattern), ['a', 'c', 'b']); // 'high' >= -Infinity is false
  assert.equal(store.listReflexion({ type: 'adaptive' }).length, 1);
  assert.equal(store.listReflexion({ type: 'reflexion' }).length, 2);
  assert.equal(store.listReflexion({ minConfidence: 0.6 }).length, 2);
  // string vs string compares as strings: 'high' >= '0.5'
  assert.deepEqual(store.listReflexion({ minConfidence: '0.5' }).map((r) => r.error_pattern).sort(), ['a', 'c', 'd']);
  assert.equal(store.listReflexion({ minConfidence: null }).length, 3);
  assert.equal(store.listReflexion({ projectSlug: 'proj-b' }).length, 1);
  assert.equal(store.listReflexion({ type: 'none' }).length, 0);
  assert.throws(() => store.listReflexion(null), { message: "Cannot destructure property 'type' of 'filters' as it is null." });
});

test('listReflexion coerces minConfidence only when a row reaches that filter', (t) => {
  const { store } = fresh(t);
  assert.deepEqual(store.listReflexion({ minConfidence: Symbol('m') }), []);
  store.addReflexion(e('p', { type: 'adaptive' }));
  assert.deepEqual(store.listReflexion({ type: 'reflexion', minConfidence: Symbol('m') }), []);
  assert.throws(() => store.listReflexion({ minConfidence: Symbol('m') }), { name: 'TypeError', message: 'Cannot convert a Symbol value to a number' });
});

test('patchReflexion: spread semantics, fixed columns, binding errors', (t) => {
  const { store } = fresh(t);
  const r = store.addReflexion(e('p', { context: { file: 'a.js' }, adaptive_state: { k: 1 }, solution_code: 'x()' }));
  let p = store.patchReflexion(r.id, { solution: 'new', confidence: 0.8, updated_at_ms: 12345 });
  assert.equal(p.solution, 'new');
  assert.equal(p.confidence, 0.8);
  assert.equal(p.updated_at_ms, 12345);
  p = store.patchReflexion(r.id, { id: 'other', created_at_ms: 1, hit_count: 9 });
  assert.equal(p.id, r.id);
  assert.equal(p.created_at_ms, r.created_at_ms);
  assert.equal(p.hit_count, 9);
  p = store.patchReflexion(r.id, { context: null, adaptive_state: null, solution_code: null });
  assert.deepEqual(p.context, { file: 'a.js' });
  assert.deepEqual(p.adaptive_state, { k: 1 });
  assert.equal(p.solution_code, null);
  p = store.patchReflexion(r.id);
  assert.ok(p.updated_at_ms > 12345);
  assert.equal(store.patchReflexion('none', { solution: 'x' }), null);
  assert.throws(() => store.patchReflexion(r.id, { type: null }), { message: 'NOT NULL constraint failed: reflexion_entries.type' });
  assert.throws(() => store.patchReflexion(r.id, { error_pattern: undefined }), { code: 'SQLITE_CONSTRAINT_NOTNULL' });
  assert.throws(() => store.patchReflexion(r.id, { solution: { obj: 1 } }), { name: 'RangeError', message: 'Too few parameter values were provided' });
  assert.throws(() => store.patchReflexion(r.id, null), { message: "Cannot read properties of null (reading 'context')" });
});

test('corrupt context JSON falls back to {} and is rewritten by a patch', (t) => {
  const { store, dbPath } = fresh(t);
  const r = store.addReflexion(e('p'));
  sqlInChild(dbPath, "UPDATE reflexion_entries SET context_json='{oops', adaptive_state_json='null' WHERE id=?", [r.id]);
  const got = store.getReflexion(r.id);
  assert.deepEqual(got.context, {});
  assert.equal(got.adaptive_state, null);
  store.patchReflexion(r.id, { solution: 'x' });
  const row = sqlInChild(dbPath, 'SELECT context_json, adaptive_state_json FROM reflexion_entries WHERE id=?', [r.id]);
  assert.deepEqual(row, { context_json: '{}', adaptive_state_json: '{}' });
});

test('corrupt context JSON: a context filter throws SQLite\'s own error; empty type reads as reflexion', (t) => {
  const { store, dbPath } = fresh(t);
  const r = store.addReflexion(e('TypeError: corrupt', { context: { file: 'a.js' } }));
  sqlInChild(dbPath, "UPDATE reflexion_entries SET context_json='oops', type='' WHERE id=?", [r.id]);
  assert.throws(() => store.findReflexion('TypeError', { file: 'a.js' }), { name: 'SqliteError', code: 'SQLITE_ERROR', message: 'malformed JSON' });
  assert.equal(store.getReflexion(r.id).type, 'reflexion');
  store.patchReflexion(r.id, { solution: 'x' });
  assert.deepEqual(sqlInChild(dbPath, 'SELECT type FROM reflexion_entries WHERE id=?', [r.id]), { type: 'reflexion' });
});

test('deleteReflexion and pruneReflexion', (t) => {
  const { store } = fresh(t);
  const a = store.addReflexion(e('a', { confidence: 0.1, updated_at_ms: 5000 }));
  store.addReflexion(e('b', { confidence: 0.5, updated_at_ms: 5000 }));
  store.addReflexion(e('c', { confidence: 0.1 }));
  assert.equal(store.pruneReflexion(), 1); // old and below 0.2
  assert.equal(store.getReflexion(a.id), null);
  assert.equal(store.pruneReflexion(undefined, 0), 0);
  assert.equal(store.pruneReflexion(-60000, 0.55), 2);
  const d = store.addReflexion(e('d'));
  assert.equal(store.deleteReflexion(d.id), true);
  assert.equal(store.deleteReflexion(d.id), false);
  assert.equal(store.deleteReflexion(), false);
});

test('CommonJS entry: reflexion round trip', (t) => {
  const cjs = require('../index.cjs');
  const dir = mkdtempSync(join(tmpdir(), 'tfx-reflexion-cjs-'));
  const store = cjs.createStore(join(dir, 'hub.db'));
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const r = store.addReflexion(e('cjs pattern'));
  assert.equal(store.findReflexion('CJS')[0].id, r.id);
});
