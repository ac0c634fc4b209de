// Robustness: every store method and the db facade, called with hostile arguments
// (symbols, throwing getters and proxies, BigInts out of range, huge and lone-surrogate
// strings, deep arrays, functions, typed arrays), must either return or throw a real JS
// Error — never crash the process — and the database must stay intact and usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { createStore } from '../index.mjs';
import { tempDir } from './helpers.mjs';

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const throwingGetter = { get agent_id() { throw new Error('getter boom'); }, get role_key_wire() { throw new Error('getter boom'); } };
const throwingProxy = new Proxy({}, { get() { throw new Error('proxy boom'); }, has() { throw new Error('proxy boom'); }, ownKeys() { throw new Error('proxy boom'); }, getOwnPropertyDescriptor() { throw new Error('proxy boom'); } });
const deep = [];
let cursor = deep;
for (let i = 0; i < 200; i++) { const next = []; cursor.push(next); cursor = next; }

const WEIRD = [
  undefined, null, true, false, 0, -0, 1, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, Number.MAX_VALUE,
  0n, 1n, 2n ** 70n, -(2n ** 70n), '', 'x', '\ud800', 'a\u0000b', 'x'.repeat(200000), '%_\\', "a') = ? OR 1=1 --",
  'rk2.', 'rk2.e30', Symbol('s'), () => 1, [], [1, 2, 3], deep, {}, { a: 1 }, new Date(0), new Uint8Array([1, 2, 3]),
  Buffer.from('abc'), new Map(), Object.create(null), throwingGetter, throwingProxy,
  { agent_id: 'a', cli: 'codex' }, { type: 'event', from: 'a', to: 'b', topic: 't' },
  { role_key_wire: 'rk2.' + Buffer.from('{"project_id":"prj_AAAAAAAAAAAAAAAAAAAAAA","role_kind":"cto"}').toString('base64url') },
  { supervisor_agent: 's', worker_agent: 'w' }, { error_pattern: 'e', error_message: 'm', solution: 's' },
];

test('hostile arguments never crash the process and leave the database intact', (t) => {
  const store = createStore(join(tempDir(t), 'hub.db'));
  t.after(() => store.close());
  store.onAssignStatusChange(() => {
    throw new Error('listener boom');
  });
  const methods = Object.keys(store).filter((k) => typeof store[k] === 'function' && k !== 'close' && k !== 'onAssignStatusChange');
  assert.ok(methods.length >= 55, `only ${methods.length} methods`);
  const rnd = mulberry32(42);
  const pick = () => WEIRD[Math.floor(rnd() * WEIRD.length)];
  let calls = 0;
  let threw = 0;
  for (let round = 0; round < 40; round++) {
    for (const name of methods) {
      const args = Array.from({ length: Math.floor(rnd() * 4) }, pick);
      calls += 1;
      try {
        store[name](...args);
      } catch (error) {
        threw += 1;
        assert.ok(error instanceof Error, `${name} threw a non-Error: ${String(error)}`);
        assert.equal(typeof error.message, 'string');
      }
    }
  }
  // The raw facade too.
  for (let i = 0; i < 200; i++) {
    try {
      store.db.prepare('SELECT ?1 AS a, ?2 AS b').get(pick(), pick());
    } catch (error) {
      assert.ok(error instanceof Error);
    }
  }
  assert.ok(threw > 0 && threw < calls);
  // Still fully usable, and SQLite finds nothing wrong with the file.
  assert.equal(store.db.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
  assert.equal(store.db.inTransaction, false);
  store.registerAgent({ agent_id: 'after-fuzz', cli: 'claude' });
  assert.equal(store.getAgent('after-fuzz').cli, 'claude');
});
