// A runtime lane: the package on Bun or Deno, where better-sqlite3 does not load.
//   node tools/runtimes/lane.mjs <bun|deno> [--only=api,replay,package] [--concurrency=N]
// 1. api:     __test__/runtimes/run.mjs under the runtime: better-sqlite3's API through
//             the ESM and CommonJS entries (expected values written in the cases), the
//             entries and the replay's engine wording on this runtime;
// 2. replay:  every golden trace and fixture through the store entries, replayed by the
//             runtime (replays.mjs), 0 failed; messages the engine words otherwise for the
//             same operation are accepted and listed (tools/replay/engine-wording.mjs);
// 3. package: the packed packages installed by the runtime's own installer from a local
//             registry, ESM and CommonJS smokes and `triflux-store info` (package-check.mjs).
// The runtime is installed from npm into .tools/runtimes/ first (install.mjs). Prints a
// summary and exits 1 on any failure.
import { fileURLToPath } from 'node:url';
import { runChild, runtimeEnv, scriptArgs } from './child.mjs';
import { RUNTIMES, ensureRuntime, runtimeVersion } from './install.mjs';
import { checkPackage } from './package-check.mjs';
import { replayAll } from './replays.mjs';

const PARTS = ['api', 'replay', 'package'];

function parseArgs(argv) {
  const name = argv.find((a) => !a.startsWith('-'));
  if (!RUNTIMES[name]) throw new Error(`usage: node tools/runtimes/lane.mjs <${Object.keys(RUNTIMES).join('|')}> [--only=${PARTS.join(',')}] [--concurrency=N]`);
  const only = argv.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? PARTS;
  for (const part of only) if (!PARTS.includes(part)) throw new Error(`unknown part ${part} (parts: ${PARTS.join(', ')})`);
  // Replays mostly wait for their ticks; more than 3 at once on 2 cores can miss a tick.
  const concurrency = Math.max(1, Math.min(3, Number(argv.find((a) => a.startsWith('--concurrency='))?.slice(14)) || 2));
  return { name, only, concurrency };
}

/** What the runtime reports as its Node version decides how lone surrogates are stored. */
async function loneSurrogatesOf(runtime) {
  const r = await runChild(runtime.exe, runtime.name === 'deno' ? ['eval', 'console.log(process.versions.node)'] : ['-e', 'console.log(process.versions.node)'], { env: runtimeEnv(runtime) });
  const node = r.stdout.trim();
  if (r.code !== 0 || !/^\d+\./.test(node)) throw new Error(`${runtime.name} did not report a Node version: ${r.stdout}${r.stderr}`);
  // better-sqlite3 on Node 24 (V8 13) and later stores U+FFFD (compatibility.md).
  return { node, loneSurrogates: Number(node.split('.')[0]) >= 24 ? 'replaced' : 'bytes' };
}

async function main() {
  const { name, only, concurrency } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const runtime = ensureRuntime(name);
  const { node, loneSurrogates } = await loneSurrogatesOf(runtime);
  console.log(`lane ${name}: ${runtimeVersion(runtime)} (reports Node ${node}: --lone-surrogates=${loneSurrogates}), parts ${only.join(', ')}`);
  const summary = [];
  let ok = true;

  if (only.includes('api')) {
    const t = Date.now();
    const r = await runChild(runtime.exe, scriptArgs(runtime, '__test__/runtimes/run.mjs'), { env: runtimeEnv(runtime) });
    process.stdout.write(r.stdout.replace(/^/gm, '  ').replace(/ {2}$/, ''));
    if (r.stderr) process.stdout.write(`[stderr]\n${r.stderr}`);
    const last = r.stdout.trim().split('\n').at(-1);
    const passed = r.code === 0 && /^\d+ passed, 0 failed$/.test(last);
    ok &&= passed;
    summary.push(`api suite (__test__/runtimes/run.mjs): ${last} [${((Date.now() - t) / 1000).toFixed(0)} s]`);
  }

  if (only.includes('replay')) {
    const t = Date.now();
    const { files, wording } = await replayAll(runtime, { concurrency, loneSurrogates });
    const sum = (key) => files.reduce((n, f) => n + f[key], 0);
    const failedFiles = files.filter((f) => !f.ok);
    ok &&= failedFiles.length === 0;
    const traces = files.filter((f) => f.rel.endsWith('.jsonl')).length;
    summary.push(
      `replays: ${traces} traces and ${files.length - traces} fixtures, ${files.length - failedFiles.length} of ${files.length} files with 0 failed; ` +
        `calls ${sum('passed')} passed, ${sum('failed')} failed, of which ${sum('worded')} accepted in ${name}'s own error wording [${((Date.now() - t) / 1000).toFixed(0)} s]`,
    );
    for (const w of wording) summary.push(`  ${w.count}x ${w.what}: V8 ${JSON.stringify(w.expected)}, ${name} ${JSON.stringify(w.actual)}`);
  }

  if (only.includes('package')) {
    const t = Date.now();
    const r = await checkPackage(runtime);
    ok &&= r.ok;
    summary.push(`package: ${r.steps.filter((s) => s.ok).length} of ${r.steps.length} checks passed [${((Date.now() - t) / 1000).toFixed(0)} s]`);
  }

  console.log(`\nlane ${name} (${runtimeVersion(runtime)}), ${((Date.now() - started) / 1000).toFixed(0)} s:`);
  for (const line of summary) console.log(`  ${line}`);
  console.log(ok ? `lane ${name}: passed` : `lane ${name}: FAILED`);
  process.exitCode = ok ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error?.stack ?? String(error));
    process.exitCode = 2;
  });
}
