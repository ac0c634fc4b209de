// The differential suite against better-sqlite3: generated cases (kinds.mjs) run on this
// package's Database and on better-sqlite3 built for the running Node; every step's
// result or error must be the same text (describe.mjs).
//
//   node __test__/differential/run.mjs [--seed N] [--count N] [--from N] [--kinds a,b]
//                                      [--nodes 20,22,24] [--show N]
//
// `--nodes` runs the same cases on each of those Nodes (the machine's own, or the ones
// `npm run nodes` installed) one after the other. Exit status 1 when any case differs.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';

import { execute } from './execute.mjs';
import { makeCase } from './kinds.mjs';
import './callbacks.mjs';
import './batched.mjs';

const require = createRequire(import.meta.url);

/**
 * Runs cases `from` .. `from + count - 1` of `seed` on both classes; returns
 * `{ cases, differences: [{ index, kind, step, reference, ours, steps }] }`.
 */
export function compareCases(Reference, Ours, { seed = 1, count = 1000, from = 0, kinds = null, max = 20 } = {}) {
  const differences = [];
  let total = 0;
  for (let index = from; index < from + count; index++) {
    const c = makeCase(seed, index, kinds);
    const reference = execute(Reference, c.steps);
    const ours = execute(Ours, c.steps);
    total++;
    const at = firstDifference(reference, ours);
    if (at >= 0) {
      differences.push({ index, kind: c.kind, step: at, reference: reference[at], ours: ours[at], steps: c.steps });
      if (differences.length >= max) break;
    }
  }
  return { cases: total, differences };
}

function firstDifference(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

const clip = (text) => (text && text.length > 600 ? `${text.slice(0, 600)}… (${text.length} chars)` : text);

/** A difference as text a person can rerun: seed, case number, its steps, both results. */
export function formatDifference(seed, d) {
  return [
    `case ${d.index} of seed ${seed} (${d.kind}), observation ${d.step}:`,
    `  steps: ${clip(inspect(d.steps, { depth: 6, breakLength: Infinity, maxStringLength: 200 }))}`,
    `  better-sqlite3: ${clip(d.reference)}`,
    `  this package:   ${clip(d.ours)}`,
  ].join('\n');
}

function parseArgs(argv) {
  const opts = { seed: 1, count: 100000, from: 0, kinds: null, nodes: null, show: 5 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=');
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--seed': opts.seed = Number(value()); break;
      case '--count': opts.count = Number(value()); break;
      case '--from': opts.from = Number(value()); break;
      case '--kinds': opts.kinds = value().split(','); break;
      case '--nodes': opts.nodes = value().split(','); break;
      case '--show': opts.show = Number(value()); break;
      default: throw new Error(`differential: unknown option ${argv[i]}`);
    }
  }
  for (const key of ['seed', 'count', 'from', 'show']) {
    if (!Number.isSafeInteger(opts[key]) || opts[key] < 0) throw new Error(`differential: --${key} must be a whole number`);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.nodes) {
    const { rerunUnderNodes } = await import('../../tools/nodes.mjs');
    rerunUnderNodes('differential', opts.nodes, fileURLToPath(import.meta.url), process.argv.slice(2));
  }
  const { loadReference } = await import('../../tools/reference.mjs');
  const Reference = loadReference();
  const Ours = require('../../better-sqlite3.cjs');
  const started = Date.now();
  const chunk = 5000;
  let cases = 0;
  const differences = [];
  for (let from = opts.from; from < opts.from + opts.count; from += chunk) {
    const count = Math.min(chunk, opts.from + opts.count - from);
    const result = compareCases(Reference, Ours, { seed: opts.seed, count, from, kinds: opts.kinds, max: opts.show - differences.length || 1 });
    cases += result.cases;
    differences.push(...result.differences);
    if (differences.length >= Math.max(opts.show, 1)) break;
  }
  for (const d of differences.slice(0, opts.show)) console.log(formatDifference(opts.seed, d));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`differential: Node ${process.versions.node}, seed ${opts.seed}, cases ${opts.from}..${opts.from + cases - 1}: ` +
    `${differences.length === 0 ? '0 differences' : `differences found (first ${differences.length} shown above)`}, ${seconds} s`);
  process.exit(differences.length === 0 ? 0 : 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
