// The command from a packed and installed copy of the package, the way an operator gets it:
// `npm pack`, install the tarball into an empty project (offline: the package has no
// dependencies and ships its prebuilt binary, so no compiler and no registry are needed),
// then `npx triflux-store`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot, tempDir } from './helpers.mjs';

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r;
}
const npm = (args, cwd) => run('npm', args, cwd);
const npx = (args, cwd) => run('npx', ['--offline', 'triflux-store', ...args], cwd);

test('npm pack, install the tarball, npx triflux-store works', (t) => {
  const packDir = tempDir(t);
  npm(['pack', '--silent', '--pack-destination', packDir], repoRoot);
  const [tarball] = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'a tarball was packed');

  const project = tempDir(t);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'operator', version: '1.0.0', private: true }));
  npm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(packDir, tarball)], project);
  copyFileSync(join(repoRoot, 'fixtures', 'hub-v6.db'), join(project, 'hub.db'));

  const info = npx(['info', 'hub.db', '--json'], project);
  const parsed = JSON.parse(info.stdout);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.deepEqual(parsed.package, { name: pkg.name, version: pkg.version });
  assert.equal(parsed.schema_version, 6);
  assert.ok(parsed.tables.messages > 0);

  // The installed copy's native backup and its check of the copy.
  const backup = npx(['backup', 'hub.db', 'copy.db', '--json'], project);
  assert.equal(JSON.parse(backup.stdout).quick_check, 'ok');
  const check = npx(['check', 'copy.db'], project);
  assert.match(check.stdout, /\nclean\n$/);
});
