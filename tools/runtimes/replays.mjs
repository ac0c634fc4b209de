// Every golden trace and fixture expectation replayed under Bun or Deno: the project's
// replayer (tools/trace-replay.mjs) run by the runtime itself against the store entry of
// each file's schema, a few files at once (the replays mostly wait for their ticks), with
// the counts and the calls accepted in the engine's own wording gathered from each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limited, replayCounts, replayFiles, traceToReplay } from '../replay/suite.mjs';
import { root } from '../targets.mjs';
import { runChild, runtimeEnv, scriptArgs } from './child.mjs';

/** The per-pair lines the replayer prints under "engine wording (file): N call(s) …". */
const WORDING_PAIR = /^ {2}(\d+)x (.+?): recorded \(V8\) (".*"), this engine (".*")$/;

/** The engine-wording pairs of one replay's output: [{ count, what, expected, actual }]. */
export function wordingPairs(stdout) {
  const pairs = [];
  for (const line of stdout.split('\n')) {
    const m = WORDING_PAIR.exec(line);
    if (m) pairs.push({ count: Number(m[1]), what: m[2], expected: JSON.parse(m[3]), actual: JSON.parse(m[4]) });
  }
  return pairs;
}

/**
 * Replays every file under `runtime`, at most `concurrency` at once. `loneSurrogates` is
 * the replayer's option for how the runtime's Node version stores a lone surrogate.
 * Returns { files: [{ rel, entry, passed, failed, worded, ok, output }], wording } where
 * `wording` merges every file's engine-wording pairs.
 */
export async function replayAll(runtime, { concurrency, loneSurrogates }) {
  const scratch = mkdtempSync(join(tmpdir(), 'tfx-runtime-replay-'));
  const run = limited(concurrency);
  try {
    const files = await Promise.all(
      replayFiles(root).map(({ rel, entry }) =>
        run(async () => {
          const { path } = traceToReplay(root, rel, scratch);
          const args = scriptArgs(runtime, join('tools', 'trace-replay.mjs'), ['--max-report=10', `--lone-surrogates=${loneSurrogates}`, path]);
          const r = await runChild(runtime.exe, args, { env: runtimeEnv(runtime, { STORE_IMPL: entry }) });
          const counts = replayCounts(r.stdout);
          const pairs = wordingPairs(r.stdout);
          const ok = r.code === 0 && counts !== null && counts.failed === 0 && counts.passed > 0;
          const line = `${rel} (${entry}): ${counts?.last ?? `no count line, exit ${r.code}`}${pairs.length ? `, ${pairs.reduce((n, p) => n + p.count, 0)} in this engine's wording` : ''} [${(r.ms / 1000).toFixed(0)} s]`;
          console.log(`${ok ? 'ok' : 'FAILED'} - replay ${line}`);
          if (!ok) console.log(`${r.stdout.slice(-6000)}${r.stderr ? `\n[stderr]\n${r.stderr.slice(-2000)}` : ''}`.replace(/^/gm, '    '));
          return { rel, entry, passed: counts?.passed ?? 0, failed: counts?.failed ?? 0, worded: pairs.reduce((n, p) => n + p.count, 0), pairs, ok };
        }),
      ),
    );
    const merged = new Map();
    for (const pair of files.flatMap((f) => f.pairs)) {
      const key = JSON.stringify([pair.what, pair.expected, pair.actual]);
      merged.set(key, { ...pair, count: (merged.get(key)?.count ?? 0) + pair.count });
    }
    return { files, wording: [...merged.values()] };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
