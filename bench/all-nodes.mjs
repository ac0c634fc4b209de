// `npm run bench:nodes`: one benchmark under every supported Node, one after the other,
// each against better-sqlite3 built for that Node (tools/nodes.mjs installs the Nodes and
// builds it; tools/reference.mjs picks it), with node:sqlite as the third store where the
// Node has it. Prints each run's table, then one summary line per Node.
//
//   node bench/all-nodes.mjs [--nodes 20,22,24,26] [--bench run|scale|memory|functions|writes|trials|calls] [-- <the bench's options>]

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hostNode, SUPPORTED_MAJORS } from '../tools/nodes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split < 0 ? argv : argv.slice(0, split);
const passed = split < 0 ? [] : argv.slice(split + 1);
const option = (name, fallback) => {
  const at = own.indexOf(`--${name}`);
  return at >= 0 && own[at + 1] ? own[at + 1] : fallback;
};
const ownMajor = process.versions.node.split('.')[0];
const majors = option('nodes', [...new Set([ownMajor, ...SUPPORTED_MAJORS])].join(',')).split(',');
const bench = option('bench', 'run');
if (!['run', 'scale', 'memory', 'functions', 'writes', 'trials', 'calls'].includes(bench)) {
  console.error(`bench:nodes: unknown bench ${bench} (run, scale, memory, functions, writes, trials or calls)`);
  process.exit(2);
}

const summary = [];
for (const major of majors) {
  const node = hostNode(major);
  if (node.betterSqlite3?.error) {
    summary.push(`Node ${node.version}: not run: better-sqlite3, the baseline, does not build for it (${node.betterSqlite3.error})`);
    continue;
  }
  console.log(`\n=== Node ${node.version} (ABI ${node.abi}): bench/${bench}.mjs ${passed.join(' ')}`);
  const run = spawnSync(node.exe, [join(here, `${bench}.mjs`), ...passed], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(run.stdout);
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('geometric mean') || l.startsWith('summary:'));
  summary.push(...(lines.length ? lines : [`exit ${run.status}`]).map((line) => `Node ${node.version}: ${line}`));
}
console.log(`\n${summary.join('\n')}`);
