// The replay's engine wording (tools/replay/engine-wording.mjs) on Node: each operation of
// its catalogue, performed by V8, gives the very message V8 recorded, so on V8 a replayed
// message is accepted only when it is the recorded one; a replay whose store words a
// message otherwise fails here. (On Bun the same module accepts JavaScriptCore's wording:
// __test__/runtimes/engine-cases.mjs, run by the Bun lane.) The replayer's report of such
// calls reads back as the lanes read it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { wordingLines } from '../tools/replay/cli.mjs';
import { engineName, engineWorded, reproduce } from '../tools/replay/engine-wording.mjs';
import { wordingPairs } from '../tools/runtimes/replays.mjs';
import { repoRoot } from './helpers.mjs';

/** Operations as the original's code does them, and the message V8 gives for each. */
const V8_OPERATIONS = [
  [(x) => (function ({ agent_id }) {})(x), undefined],
  [(x) => (function ({ agent_id }) {})(x), null],
  [(x) => (function (_, { supervisor_agent } = {}) {})(0, x), null],
  [(filters) => { const { type } = filters; }, null],
  [(x) => (function (_, { max_messages = 20 } = {}) {})(0, x), null],
  [(x) => (function ({ type = 'reflexion' }) {})(x), undefined],
  [(x) => x.replace, undefined],
  [(context) => Object.keys(context), null],
  [(errorPattern) => errorPattern.replace(/%/g, ''), 42],
  [(payload) => JSON.stringify(payload), { n: 1n }],
];

function messageOf(fn, value) {
  try {
    fn(value);
  } catch (error) {
    return error;
  }
  assert.fail('expected a throw');
}

test("on V8, each operation's reproduction gives the recorded message and accepts only it", () => {
  assert.match(engineName(), /^V8 \(Node /);
  for (const [fn, value] of V8_OPERATIONS) {
    const { name, message } = messageOf(fn, value);
    const reproduced = reproduce(message);
    assert.ok(reproduced.length > 0, `not in the catalogue: ${message}`);
    for (const r of reproduced) assert.deepEqual([r.name, r.message], [name, message], r.what);
    assert.ok(engineWorded(message, message, name));
    assert.equal(engineWorded(message, message.toUpperCase(), name), null);
  }
  // A message the package writes itself is never an engine's wording.
  assert.deepEqual(reproduce('The database connection is not open'), []);
});

test('on V8 a replayed TypeError message other than the recorded one fails the call', async (t) => {
  // A recorded V8 message, replayed against a store that throws JavaScriptCore's wording
  // of the same operation: V8 does not say that, so the call fails.
  const dir = mkdtempSync(join(tmpdir(), 'tfx-engine-wording-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const v8 = "Cannot destructure property 'agent_id' of 'undefined' as it is undefined.";
  const javaScriptCore = "Cannot destructure property 'agent_id' from null or undefined value";
  writeFileSync(
    join(dir, 'store.mjs'),
    `export function createStore() {
      return { close() {}, registerAgent(x) { if (x === undefined) throw new TypeError(process.env.WORDING); return null; } };
    }\n`,
  );
  const trace = [
    { trace: 'triflux-hub-store', format: 1 },
    { i: 0, call: 'createStore', args: ['<dbPath>'], result: { close: 'function', registerAgent: 'function' } },
    { i: 1, call: 'registerAgent', args: ['$undefined'], error: { name: 'TypeError', message: v8, code: null } },
  ];
  writeFileSync(join(dir, 'trace.jsonl'), `${trace.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const replay = (wording) =>
    spawnSync(process.execPath, [join(repoRoot, 'tools', 'trace-replay.mjs'), join(dir, 'trace.jsonl')], {
      env: { ...process.env, STORE_IMPL: join(dir, 'store.mjs'), WORDING: wording },
      encoding: 'utf8',
    });
  const same = replay(v8);
  assert.equal(same.stdout.trim().split('\n').at(-1), '2 passed, 0 failed', same.stdout + same.stderr);
  const other = replay(javaScriptCore);
  assert.equal(other.status, 1);
  assert.equal(other.stdout.trim().split('\n').at(-1), '1 passed, 1 failed', other.stdout + other.stderr);
  assert.doesNotMatch(other.stdout, /engine wording/);
});

test("the lanes read back the replayer's engine-wording report, quotes and backslashes included", () => {
  const worded = [
    { what: 'reading a property', expected: "Cannot read properties of null (reading 'p')", actual: "null is not an object (evaluating 'v.p')" },
    { what: 'calling what is not a function', expected: 'f is not a function', actual: "f is not a function. (In 'f(/[%_\\\\]/g, \"\\\\$&\")', 'f' is undefined)" },
    { what: 'reading a property', expected: "Cannot read properties of null (reading 'p')", actual: "null is not an object (evaluating 'v.p')" },
  ];
  const lines = wordingLines('golden/x.jsonl', worded, 'an engine');
  assert.match(lines[0], /^engine wording \(golden\/x\.jsonl\): 3 call\(s\) accepted .* an engine words otherwise/);
  assert.deepEqual(wordingPairs(lines.join('\n')), [
    { count: 2, ...worded[0] },
    { count: 1, ...worded[1] },
  ]);
});
