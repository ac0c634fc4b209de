// The adversarial suite's sample (the long run: `npm run test:adversarial`): seeded random
// call sequences, each in a child process on this package and on better-sqlite3, give the
// same observations, with no crash, hang or memory excess; and the harness tells apart
// what it must (a difference, a documented one, this package's crash or hang, the
// reference's own crash, memory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import { DOCUMENTED, classify, memoryExcess } from './adversarial/compare.mjs';
import { FAILING, formatFinding, runChild, runSequences } from './adversarial/run.mjs';
import { makeSequence } from './adversarial/generate.mjs';
import { referenceSkip } from './helpers.mjs';

const SEED = 20260538;
const CHILD = fileURLToPath(new URL('./fixtures/adversarial-child.mjs', import.meta.url));

test('24 adversarial sequences: the same observations as better-sqlite3, no crash, hang or memory excess', { skip: referenceSkip }, async () => {
  const findings = [];
  const { tally } = await runSequences({ seed: SEED, count: 24, jobs: 2, timeout: 60, onFinding: (run) => findings.push(formatFinding(SEED, run)) });
  assert.deepEqual(findings, []);
  assert.equal(tally.sequences, 24);
  assert.equal(tally.crash + tally.hang + tally.memory + tally.difference, 0);
});

test('a sequence is the same data on every run, and reaches every part of the API', () => {
  assert.deepEqual(makeSequence(SEED, 3), makeSequence(SEED, 3));
  assert.notDeepEqual(makeSequence(SEED, 3), makeSequence(SEED, 4));
  const ops = new Set();
  for (let i = 0; i < 200; i++) {
    JSON.stringify(makeSequence(SEED, i).steps, (key, value) => {
      if (value?.op) ops.add(value.op);
      return value;
    });
  }
  for (const op of ['open', 'close', 'exec', 'prepare', 'call', 'iterate', 'next', 'return', 'drain', 'loop', 'bind', 'mode', 'columns',
    'shape', 'tag', 'misuse', 'pragma', 'function', 'aggregate', 'table', 'tx', 'unsafe', 'defaultSafe', 'serialize', 'backup',
    'loadExtension', 'gc', 'props', 'worker']) {
    assert.ok(ops.has(op), `no sequence has a ${op} step`);
  }
});

/** Both sides' runs of the stand-in child, as `plan` says (see the fixture). */
async function standIn(plan, timeout = 5) {
  const previous = process.env.ADVERSARIAL_CHILD;
  process.env.ADVERSARIAL_CHILD = plan;
  try {
    const [ours, reference] = await Promise.all(['ours', 'reference'].map((impl) => runChild(impl, 1, 0, { timeout, program: CHILD })));
    return classify(ours, reference);
  } finally {
    if (previous === undefined) delete process.env.ADVERSARIAL_CHILD;
    else process.env.ADVERSARIAL_CHILD = previous;
  }
}

test('the harness: the same, a difference, this package crashing or hanging, the reference crashing', async () => {
  assert.equal((await standIn('ours=ok,reference=ok')).outcome, 'same');
  const difference = await standIn('ours=other,reference=ok');
  assert.deepEqual([difference.outcome, difference.at, difference.ours, difference.reference], ['difference', 2, ['2', 'call: n:2'], ['2', 'call: n:1']]);
  const crash = await standIn('ours=segv,reference=ok');
  assert.deepEqual([crash.outcome, crash.oursEnd], ['crash', 'signal SIGSEGV']);
  // better-sqlite3 12.11.1 dies of SIGSEGV on unsafeMode() after close(): its crash, not ours.
  const theirs = await standIn('ours=ok,reference=segv');
  assert.deepEqual([theirs.outcome, theirs.referenceEnd], ['reference crash', 'signal SIGSEGV']);
  const hang = await standIn('ours=hang,reference=ok', 2);
  assert.deepEqual([hang.outcome, hang.oursEnd], ['hang', 'hang']);
  assert.ok(FAILING.has('crash') && FAILING.has('hang') && FAILING.has('difference') && !FAILING.has('reference crash'));
});

test('the harness: documented differences are recognized, memory past twice the reference is reported', () => {
  const run = (lines, maxRss = 1000) => ({ transcript: { lines, maxRss }, code: 0, signal: null, timedOut: false });
  const prepared = run([['0', 'open: db#0'], ['1', 'prepare: stmt#0 {busy/ecw=t:false}']]);
  const refused = run([['0', 'open: db#0'], ['1', 'prepare: throw SqliteError[Error] name="SqliteError" code="SQLITE_ERROR" message="table t already exists"']]);
  assert.deepEqual([classify(prepared, refused).outcome, classify(prepared, refused).documented], ['documented', 'reused prepare()']);
  assert.equal(classify(refused, prepared).outcome, 'difference', 'only in the documented direction');
  // A text prepared before on that database, compiled then: `CREATE … IF NOT EXISTS` still writes.
  const trigger = (n, readonly) => `prepare: stmt#${n} {busy/ecw=t:false,reader/e=t:false,readonly/e=t:${readonly},source/e=s:"CREATE TRIGGER IF NOT EXISTS tr",database/e=db#0}`;
  const again = (readonly, db = 0) => run([['0', trigger(0, false).replace('db#0', `db#${db}`)], ['1', trigger(1, readonly)]]);
  assert.equal(classify(again(false), again(true)).outcome, 'documented');
  assert.equal(classify(again(false, 1), again(true, 1)).outcome, 'difference', 'prepared before on another database');
  assert.ok(DOCUMENTED.every((d) => d.doc.startsWith('docs/')));
  assert.ok(memoryExcess(300 * 1024, 100 * 1024));
  assert.ok(!memoryExcess(250 * 1024, 100 * 1024));
  const big = classify(run([['0', 'x']], 400 * 1024), run([['0', 'x']], 100 * 1024));
  assert.deepEqual([big.outcome, big.memory], ['same', { ours: 400 * 1024, reference: 100 * 1024 }]);
});
