// `npm ci` on the Node this runs on (CI and the README: Node 20, the engines floor) prints
// no EBADENGINE warning: every package in the lockfile accepts this Node version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { repoRoot } from './helpers.mjs';

const semver = createRequire(import.meta.url)('semver');

test("every locked package's engines.node accepts this Node (no EBADENGINE from npm ci)", () => {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.ok(semver.satisfies(process.version, pkg.engines.node), `this Node (${process.version}) is one the package supports`);
  const refused = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.engines?.node && !semver.satisfies(process.version, entry.engines.node))
    .map(([path, entry]) => `${path.replace(/^.*node_modules\//, '')}@${entry.version} (node ${entry.engines.node})`);
  assert.deepEqual(refused, []);
});
