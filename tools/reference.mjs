// better-sqlite3 for the Node that is running: the differential tests' reference and the
// benchmarks' baseline. npm installs one build (node_modules/better-sqlite3, for the Node
// that ran `npm ci`); other Nodes use their own build from .tools/better-sqlite3/, made
// against that Node's own headers (a machine's npm config may point node-gyp at another
// Node's). `node tools/reference.mjs` (npm's pretest) builds it when missing and says
// why when it cannot be built.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { betterSqlite3BuiltFor, betterSqlite3Dir, ensureBetterSqlite3 } from './platform-tools.mjs';

const require = createRequire(import.meta.url);
const abi = process.versions.modules;
const installed = dirname(require.resolve('better-sqlite3/package.json'));
const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
const kept = betterSqlite3Dir(process.arch, abi);
/** Written when the build for this Node failed: the reason, so tests can say it. */
const failedStamp = `${kept}.failed`;

const builtForThisNode = (dir) => betterSqlite3BuiltFor(dir, abi);

/** The better-sqlite3 package folder built for this Node, or null. */
export function referenceDir() {
  if (builtForThisNode(installed)) return installed;
  if (process.platform === 'linux' && builtForThisNode(kept)) return kept;
  return null;
}

/** Why there is no reference for this Node (for a test's skip), or false. */
export function referenceMissing() {
  if (referenceDir()) return false;
  if (existsSync(failedStamp)) return `better-sqlite3 ${version}, the reference, does not build for Node ${process.versions.node} (ABI ${abi}): ${readFileSync(failedStamp, 'utf8').trim()}`;
  if (process.platform === 'win32') return `better-sqlite3 ${version}, the reference, has no build for this platform here (its Windows binary needs MSVC)`;
  return `better-sqlite3 ${version}, the reference, has no build for Node ${process.versions.node} (ABI ${abi}) here: run \`node tools/reference.mjs\``;
}

/** better-sqlite3's Database class built for this Node (throws when there is none). */
export function loadReference() {
  const dir = referenceDir();
  if (!dir) throw new Error(referenceMissing());
  return require(dir);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && !referenceDir() && process.platform === 'linux') {
  // This Node's own headers: Node's release archives and npm packages carry include/node.
  const nodeDir = dirname(dirname(process.execPath));
  try {
    if (!existsSync(join(nodeDir, 'include', 'node', 'node_version.h'))) {
      mkdirSync(dirname(kept), { recursive: true });
      writeFileSync(failedStamp, `no Node headers beside ${process.execPath}\n`);
    } else {
      ensureBetterSqlite3(nodeDir, process.arch);
    }
  } catch {
    // ensureBetterSqlite3 kept the reason in the stamp; the suite runs without a reference.
  }
  if (!referenceDir()) console.warn(`reference: ${referenceMissing()}; the tests that compare with it are skipped`);
}
