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
// Deliberate differences are listed in tools/replay/suite.mjs (EXCLUDED), which the Bun
// and Deno lanes replay from too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { EXCLUDED, TRACE_DIRS, limited, replayCounts, replayFiles, traceToReplay } from '../tools/replay/suite.mjs';
import { emulator, loneSurrogateHex, repoRoot } from './helpers.mjs';

// Under emulation one at a time: an emulated replay keeps a core busy.
const CONCURRENCY = Math.max(1, Math.min(3, Number(process.env.REPLAY_CONCURRENCY) || (emulator ? 1 : 2)));
// Under emulation the first segments of a trace run cold (JIT, and qemu translating it)
// and overrun their second: warm up on a scratch store first (see trace-replay.mjs).
const WARMUP = emulator ? ['--warmup=400'] : [];
const TIMEOUT_MS = 10 * 60 * 1000;

// How the original stores a lone surrogate on this Node (the traces were recorded on Node 20).
const LONE_SURROGATES = `--lone-surrogates=${loneSurrogateHex() === 'EFBFBD' ? 'replaced' : 'bytes'}`;

const list = replayFiles(repoRoot);
const files = list.map((f) => f.rel);
const schemas = Object.fromEntries(list.map((f) => [f.rel, f.schema]));
const entries = Object.fromEntries(list.map((f) => [f.rel, f.entry]));

// Under emulation the schema 7 and 8 traces (the same binary's later statement forms, proven
// natively on every Node) replay only when REPLAY_ALL_SCHEMAS=1 (npm run test:platforms sets
// it): .ci/run's emulated core runs take the v6 traces and every fixture of every version.
const ALL_SCHEMAS = !emulator || process.env.REPLAY_ALL_SCHEMAS === '1';
const skipped = (rel) =>
  !ALL_SCHEMAS && rel.endsWith('.jsonl') && schemas[rel] !== 6
    ? `the schema ${schemas[rel]} traces replay under ${emulator} only with REPLAY_ALL_SCHEMAS=1`
    : false;

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
        const { path, removed } = traceToReplay(repoRoot, rel, scratch);
        const r = await run(() => replay(path, entries[rel]));
        const counts = replayCounts(r.stdout);
        st.diagnostic(`${entries[rel]}: ${counts?.last ?? 'no count line'}${removed ? ` (${removed} excluded)` : ''}`);
        const ok = counts && counts.failed === 0 && counts.passed > 0 && r.code === 0;
        assert.ok(ok, `${rel} (exit ${r.code}):\n${r.stdout.slice(-8000)}${r.stderr ? `\n[stderr]\n${r.stderr.slice(-2000)}` : ''}`);
      }),
    ),
  );
});
