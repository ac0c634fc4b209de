// The command from a packed and installed copy of the package, the way an operator gets it:
// `npm pack` of the package and of the host's platform package (the binary's home),
// install both tarballs into an empty project (offline: no compiler and no registry are
// needed), then `npx triflux-store`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { emulator, packWithLocalBinary, repoRoot, tempDir } from './helpers.mjs';

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r;
}
const npm = (args, cwd) => run('npm', args, cwd);
const npx = (args, cwd) => run('npx', ['--offline', 'triflux-store', ...args], cwd);

// npm's .cmd shims end in `goto #_undefined_# 2>NUL || title … & "%_prog%" …`, which
// Windows' cmd.exe runs and Wine's silently does not (exit 0, no output).
const wineSkip = emulator === 'wine' && "Wine's cmd.exe does not run npm's .cmd shims (npx exits 0 without running the command)";
test('npm pack, install the tarball, npx triflux-store works', { skip: wineSkip }, (t) => {
  const { tarballs } = packWithLocalBinary(t);
  assert.equal(tarballs.length, 2, 'the main and the platform package were packed');

  const project = tempDir(t);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'operator', version: '1.0.0', private: true }));
  npm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], project);
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
