// The adversarial suite: seeded random call sequences (generate.mjs), each run in a child
// process of its own on this package and on better-sqlite3 built for the running Node
// (program.mjs), every observation compared (compare.mjs). Crashes (signals), hangs (time
// limits) and memory are reported apart from differences, and so are the reference's own.
//
//   node __test__/adversarial/run.mjs [--seed N] [--count N] [--from N] [--jobs N]
//                                     [--timeout S] [--nodes 20,22,24] [--show N] [--trace]
//
// `--trace` prints each sequence's steps and both transcripts (with `--from I --count 1`,
// one finding again). Exit status 1 on a crash, hang, memory finding or a difference that
// docs/better-sqlite3-api.md does not list.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';

import { classify, parseTranscript } from './compare.mjs';
import { makeSequence } from './generate.mjs';

const PROGRAM = fileURLToPath(new URL('./program.mjs', import.meta.url));

/** Runs sequence `index` of `seed` on `impl` in a child; resolves to its run. */
export function runChild(impl, seed, index, { timeout = 60, program = PROGRAM } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `adversarial-${impl}-`));
  const output = `${dir}.transcript`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', program, impl, String(seed), String(index), dir, output], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const err = [];
    child.stderr.on('data', (d) => err.push(d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeout * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      const text = existsSync(output) ? readFileSync(output, 'utf8') : '';
      rmSync(output, { force: true });
      resolve({ impl, transcript: parseTranscript(text), code, signal, timedOut, stderr: Buffer.concat(err).toString('utf8').slice(-2000) });
    });
  });
}

/** Both runs of sequence `index` and what they came to. */
export async function runSequence(seed, index, options = {}) {
  const [ours, reference] = await Promise.all([runChild('ours', seed, index, options), runChild('reference', seed, index, options)]);
  const sequence = makeSequence(seed, index);
  return { index, ours, reference, result: classify(ours, reference, { sequence }) };
}

const clip = (text) => (text && text.length > 800 ? `${text.slice(0, 800)}… (${text.length} chars)` : text);

/** A finding as text a person can rerun. */
export function formatFinding(seed, run, { trace = false } = {}) {
  const { result } = run;
  const lines = [`sequence ${run.index} of seed ${seed}: ${result.outcome}${result.documented ? ` (${result.documented})` : ''}`];
  if (result.outcome !== 'same') {
    lines.push(`  observation ${result.at}: this package:   ${clip(JSON.stringify(result.ours))}`);
    lines.push(`  ${' '.repeat(String(result.at).length + 13)}better-sqlite3: ${clip(JSON.stringify(result.reference))}`);
    lines.push(`  ended: this package ${result.oursEnd}, better-sqlite3 ${result.referenceEnd}`);
  }
  if (result.memory) lines.push(`  peak RSS: this package ${result.memory.ours} KiB, better-sqlite3 ${result.memory.reference} KiB`);
  for (const side of [run.ours, run.reference]) {
    if (side.stderr.trim() && (result.outcome !== 'same' || trace)) lines.push(`  ${side.impl} stderr: ${clip(side.stderr.trim())}`);
  }
  lines.push(`  again: node __test__/adversarial/run.mjs --seed ${seed} --from ${run.index} --count 1 --trace`);
  if (trace) {
    lines.push(`  steps: ${inspect(makeSequence(seed, run.index).steps, { depth: 12, breakLength: 160, maxStringLength: 200 })}`);
    for (const side of [run.ours, run.reference]) {
      lines.push(`  ${side.impl}:`, ...side.transcript.lines.map((l) => `    ${clip(l.join('  '))}`));
    }
  }
  return lines.join('\n');
}

/** Findings that fail the suite (the reference's own crashes and documented differences do not). */
export const FAILING = new Set(['difference', 'crash', 'hang']);

/** Runs sequences `from`..`from + count - 1` with `jobs` at a time; returns the tally and findings. */
export async function runSequences({ seed = 1, from = 0, count = 100, jobs = 1, timeout = 60, onFinding = () => {}, onProgress = () => {} } = {}) {
  const tally = { sequences: 0, same: 0, difference: 0, documented: 0, crash: 0, hang: 0, memory: 0, 'reference crash': 0, 'reference hang': 0 };
  const documented = {};
  const referenceCrashes = {};
  let next = from;
  const worker = async () => {
    while (next < from + count) {
      const index = next++;
      const run = await runSequence(seed, index, { timeout });
      const { result } = run;
      tally.sequences += 1;
      tally[result.outcome] += 1;
      if (result.documented) documented[result.documented] = (documented[result.documented] ?? 0) + 1;
      if (result.outcome === 'reference crash') {
        const op = (run.reference.transcript.lines.at(-1)?.[1] ?? '').split(':')[0] || 'start';
        const cause = `${result.referenceEnd} after ${op}`;
        referenceCrashes[cause] = (referenceCrashes[cause] ?? 0) + 1;
      }
      if (result.memory) tally.memory += 1;
      if (FAILING.has(result.outcome) || result.memory) onFinding(run);
      onProgress(tally);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return { tally, documented, referenceCrashes };
}

function parseArgs(argv) {
  const opts = { seed: 1, from: 0, count: 10000, jobs: 1, timeout: 60, nodes: null, show: 10, trace: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=');
    const value = () => inline ?? argv[++i];
    if (flag === '--trace') opts.trace = true;
    else if (flag === '--nodes') opts.nodes = value().split(',');
    else if (['--seed', '--from', '--count', '--jobs', '--timeout', '--show'].includes(flag)) opts[flag.slice(2)] = Number(value());
    else throw new Error(`adversarial: unknown option ${argv[i]}`);
  }
  for (const key of ['seed', 'from', 'count', 'jobs', 'timeout', 'show']) {
    if (!Number.isSafeInteger(opts[key]) || opts[key] < 0) throw new Error(`adversarial: --${key} must be a whole number`);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.nodes) {
    const { rerunUnderNodes } = await import('../../tools/nodes.mjs');
    rerunUnderNodes('adversarial', opts.nodes, fileURLToPath(import.meta.url), process.argv.slice(2));
  }
  const started = Date.now();
  let shown = 0;
  const { tally, documented, referenceCrashes } = await runSequences({
    ...opts,
    onFinding: (run) => {
      if (shown++ < opts.show) console.log(formatFinding(opts.seed, run, opts));
    },
    onProgress: ({ sequences }) => {
      if (sequences % 1000 === 0 && sequences < opts.count) console.log(`adversarial: ${sequences} of ${opts.count} sequences run`);
    },
  });
  if (opts.trace && shown === 0) {
    for (let index = opts.from; index < opts.from + opts.count; index++) console.log(formatFinding(opts.seed, await runSequence(opts.seed, index, opts), opts));
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const list = (counts) => Object.entries(counts).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none';
  console.log(`adversarial: Node ${process.versions.node}, seed ${opts.seed}, sequences ${opts.from}..${opts.from + opts.count - 1}: ` +
    `${tally.sequences} run, ${tally.crash} crashes, ${tally.hang} hangs, ${tally.memory} memory, ${tally.difference} differences; ` +
    `documented differences ${tally.documented} (${list(documented)}); better-sqlite3's own crashes ${tally['reference crash']} (${list(referenceCrashes)}), hangs ${tally['reference hang']}; ${seconds} s`);
  process.exit(tally.crash + tally.hang + tally.memory + tally.difference === 0 ? 0 : 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
