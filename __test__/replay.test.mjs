// Replays every golden trace (golden/*.jsonl for schema 6, golden-v7/ and golden-v8/) and
// every fixture expectation (fixtures/*.expected.json) against the package entry of its
// schema version (the root, /v7 or /v8) with tools/trace-replay.mjs, each in its own
// child process, and requires "N passed, 0 failed".
//
// The replays mostly sleep (the traces wait for their ticks), so several run at once, but
// never more than REPLAY_CONCURRENCY (default 2, at most 3): on a busy 2-core machine more
// replays at a time can miss the replayer's timing budget, and clock-normalized fields
// then drift by a second.
//
// Deliberate differences: EXCLUDED lists, per file, the call indexes (`i`) whose outcome
// this package deliberately answers differently from the original, each with its reason.
// Those calls are removed from a temporary copy of the trace before replaying. Later calls
// still depend on earlier ones, so only exclude a call whose outcome (not effect) differs.
// It is empty: no deliberate difference is known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

import { emulator, loneSurrogateHex, repoRoot } from './helpers.mjs';

/** @type {Record<string, Record<number, string>>} file (relative to the repo) -> { i: reason } */
export const EXCLUDED = {
  // 'golden/trace-public-1.jsonl': { 123: 'why this outcome deliberately differs' },
};

// Under emulation one at a time: an emulated replay keeps a core busy.
const CONCURRENCY = Math.max(1, Math.min(3, Number(process.env.REPLAY_CONCURRENCY) || (emulator ? 1 : 2)));
// Under emulation the first segments of a trace run cold (JIT, and qemu translating it)
// and overrun their second: warm up on a scratch store first (see trace-replay.mjs).
const WARMUP = emulator ? ['--warmup=400'] : [];
const TIMEOUT_MS = 10 * 60 * 1000;

// How the original stores a lone surrogate on this Node (the traces were recorded on Node 20).
const LONE_SURROGATES = `--lone-surrogates=${loneSurrogateHex() === 'EFBFBD' ? 'replaced' : 'bytes'}`;

/** The entry that answers for each schema version (traces and expectations name theirs). */
const ENTRIES = { 6: './index.mjs', 7: './v7.mjs', 8: './v8.mjs' };
const TRACE_DIRS = { 6: 'golden', 7: 'golden-v7', 8: 'golden-v8' };

/** The schema a file was recorded at: its `schema` header (absent in schema 6 files). */
function schemaOf(rel) {
  const text = readFileSync(join(repoRoot, rel), 'utf8');
  const header = rel.endsWith('.jsonl') ? JSON.parse(text.slice(0, text.indexOf('\n'))) : JSON.parse(text);
  return header.schema ?? 6;
}

const files = [
  ...Object.values(TRACE_DIRS).flatMap((dir) =>
    readdirSync(join(repoRoot, dir))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => `${dir}/${f}`),
  ),
  ...readdirSync(join(repoRoot, 'fixtures'))
    .filter((f) => f.endsWith('.expected.json'))
    .sort()
    .map((f) => `fixtures/${f}`),
];
const schemas = Object.fromEntries(files.map((rel) => [rel, schemaOf(rel)]));

// Under emulation the schema 7 and 8 traces (the same binary's later statement forms, proven
// natively on every Node) replay only when REPLAY_ALL_SCHEMAS=1 (npm run test:platforms sets
// it): .ci/run's emulated core runs take the v6 traces and every fixture of every version.
const ALL_SCHEMAS = !emulator || process.env.REPLAY_ALL_SCHEMAS === '1';
const skipped = (rel) =>
  !ALL_SCHEMAS && rel.endsWith('.jsonl') && schemas[rel] !== 6
    ? `the schema ${schemas[rel]} traces replay under ${emulator} only with REPLAY_ALL_SCHEMAS=1`
    : false;

/** The file to replay: the original, or a copy without the excluded calls. */
function traceToReplay(rel, scratch) {
  const excluded = EXCLUDED[rel] ?? {};
  const skip = new Set(Object.keys(excluded).map(Number));
  const original = join(repoRoot, rel);
  if (skip.size === 0) return { path: original, removed: 0 };
  const out = join(scratch, basename(rel));
  let removed = 0;
  if (rel.endsWith('.jsonl')) {
    const lines = readFileSync(original, 'utf8').split('\n');
    const kept = lines.filter((line) => {
      if (!line.trim()) return true;
      const obj = JSON.parse(line);
      if ('call' in obj && skip.has(obj.i)) {
        removed += 1;
        return false;
      }
      return true;
    });
    writeFileSync(out, kept.join('\n'));
  } else {
    const doc = JSON.parse(readFileSync(original, 'utf8'));
    const before = doc.calls.length;
    doc.calls = doc.calls.filter((c) => !skip.has(c.i));
    removed = before - doc.calls.length;
    // The fixture database stays where it is: point at it absolutely.
    if (doc.fixture) doc.fixture = resolve(repoRoot, 'fixtures', doc.fixture);
    writeFileSync(out, JSON.stringify(doc));
  }
  assert.equal(removed, skip.size, `${rel}: every excluded index must name a call in the file`);
  return { path: out, removed };
}

function replay(path, entry) {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'tools', 'trace-replay.mjs'), '--max-report=10', LONE_SURROGATES, ...WARMUP, path],
      { cwd: repoRoot, env: { ...process.env, STORE_IMPL: entry }, timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolvePromise({ code: error?.code ?? 0, stdout, stderr }),
    );
  });
}

/** Runs `jobs` (functions returning promises) with at most `limit` in flight. */
function limited(limit) {
  let active = 0;
  const queue = [];
  const next = () => {
    if (active >= limit || queue.length === 0) return;
    active += 1;
    const { job, resolveJob, rejectJob } = queue.shift();
    job()
      .then(resolveJob, rejectJob)
      .finally(() => {
        active -= 1;
        next();
      });
  };
  return (job) =>
    new Promise((resolveJob, rejectJob) => {
      queue.push({ job, resolveJob, rejectJob });
      next();
    });
}

test('the replay list covers every golden trace and fixture expectation, each with its entry', () => {
  assert.ok(files.filter((f) => f.startsWith('golden/')).length >= 9);
  assert.equal(files.filter((f) => f.startsWith('golden-v7/')).length, 7);
  assert.equal(files.filter((f) => f.startsWith('golden-v8/')).length, 7);
  assert.equal(files.filter((f) => f.startsWith('fixtures/')).length, 8);
  for (const [version, dir] of Object.entries(TRACE_DIRS)) {
    for (const rel of files.filter((f) => f.startsWith(`${dir}/`))) assert.equal(schemas[rel], Number(version), rel);
  }
  // A file of one generation opened by a later store: the expectation names the later one.
  assert.equal(schemas['fixtures/hub-v6.expected.json'], 6);
  assert.equal(schemas['fixtures/hub-v6.as-v7.expected.json'], 7);
  assert.equal(schemas['fixtures/hub-v6.as-v8.expected.json'], 8);
  assert.equal(schemas['fixtures/hub-v7.as-v8.expected.json'], 8);
  for (const rel of Object.keys(EXCLUDED)) assert.ok(files.includes(rel), `EXCLUDED names an unknown file: ${rel}`);
});

test('every trace and fixture replays with 0 failed', { timeout: TIMEOUT_MS * 2, concurrency: CONCURRENCY }, async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'tfx-replay-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const run = limited(CONCURRENCY);
  await Promise.all(
    files.map((rel) =>
      t.test(rel, { timeout: TIMEOUT_MS, skip: skipped(rel) }, async (st) => {
        const { path, removed } = traceToReplay(rel, scratch);
        const r = await run(() => replay(path, ENTRIES[schemas[rel]]));
        const lines = r.stdout.trim().split('\n');
        const last = lines[lines.length - 1] ?? '';
        const m = /^(\d+) passed, (\d+) failed$/.exec(last);
        st.diagnostic(`${ENTRIES[schemas[rel]]}: ${last}${removed ? ` (${removed} excluded)` : ''}`);
        const ok = m && Number(m[2]) === 0 && Number(m[1]) > 0 && r.code === 0;
        assert.ok(ok, `${rel} (exit ${r.code}):\n${r.stdout.slice(-8000)}${r.stderr ? `\n[stderr]\n${r.stderr.slice(-2000)}` : ''}`);
      }),
    ),
  );
});
