// The npm layout napi-rs publishes: one npm/<triple> package per target, the main
// package's optionalDependencies on them at its own version, and the prepack guard that
// refuses to pack or publish without the binaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { targets, pkg } from '../tools/targets.mjs';
import { repoRoot, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const host = require('../lib/native.cjs').hostTriple();

const EXPECTED = {
  'x86_64-unknown-linux-gnu': ['linux', 'x64', 'glibc'],
  'x86_64-unknown-linux-musl': ['linux', 'x64', 'musl'],
  'aarch64-unknown-linux-gnu': ['linux', 'arm64', 'glibc'],
  'aarch64-unknown-linux-musl': ['linux', 'arm64', 'musl'],
  'x86_64-apple-darwin': ['darwin', 'x64', null],
  'aarch64-apple-darwin': ['darwin', 'arm64', null],
  'x86_64-pc-windows-msvc': ['win32', 'x64', null],
  'aarch64-pc-windows-msvc': ['win32', 'arm64', null],
};

test('package.json names every release target, and each has its npm/<triple> package', () => {
  assert.deepEqual(pkg.napi.targets.slice().sort(), Object.keys(EXPECTED).sort());
  for (const t of targets) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'npm', t.dir, 'package.json'), 'utf8'));
    const [os, cpu, libc] = EXPECTED[t.rust];
    assert.equal(manifest.name, `triflux-native-store-${t.dir}`, t.rust);
    assert.equal(manifest.version, pkg.version, t.rust);
    assert.deepEqual(manifest.os, [os], t.rust);
    assert.deepEqual(manifest.cpu, [cpu], t.rust);
    assert.deepEqual(manifest.libc, libc ? [libc] : undefined, t.rust);
    assert.equal(manifest.main, `triflux-native-store.${t.dir}.node`);
    assert.deepEqual(manifest.files, [manifest.main, 'LICENSE']);
    assert.deepEqual(manifest.engines, pkg.engines);
    assert.deepEqual(manifest.repository, pkg.repository);
    assert.match(manifest.scripts.prepack, /accessSync\('triflux-native-store\.[a-z0-9-]+\.node'\)/);
  }
});

test('optionalDependencies are written at publish time (napi pre-publish), not kept in the repository', () => {
  // `npm ci` refuses a package.json naming packages its lockfile cannot hold, and
  // unpublished platform packages cannot be locked.
  assert.equal(pkg.optionalDependencies, undefined);
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'));
  assert.equal(lock.packages[''].optionalDependencies, undefined);
});

test('the guard accepts the optionalDependencies napi pre-publish writes, and refuses any other set', (t) => {
  const written = Object.fromEntries(targets.map((x) => [x.pkg, pkg.version]));
  const guard = (optionalDependencies) => {
    const dir = packableCopy(t, [host]);
    const file = join(dir, 'package.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), optionalDependencies }));
    return spawnSync(process.execPath, ['tools/check-binaries.mjs'], { cwd: dir, encoding: 'utf8' });
  };
  assert.equal(guard(written).status, 0);
  const stale = guard({ ...written, [targets[0].pkg]: '0.0.9' });
  assert.equal(stale.status, 1);
  assert.match(stale.stderr, /optionalDependencies\["triflux-native-store-[a-z0-9-]+"\] is 0\.0\.9/);
  const unknown = guard({ ...written, 'triflux-native-store-freebsd-x64': pkg.version });
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /names triflux-native-store-freebsd-x64, which is not a napi target/);
});

test('package metadata: MIT LICENSE, repository, Node 20+ as the README says, no binary in the main package', () => {
  assert.equal(pkg.license, 'MIT');
  assert.match(readFileSync(join(repoRoot, 'LICENSE'), 'utf8'), /^MIT License/);
  assert.match(pkg.repository.url, /^git\+https:\/\/.+\.git$/);
  assert.equal(pkg.engines.node, '>= 20');
  assert.match(readFileSync(join(repoRoot, 'README.md'), 'utf8'), /Node\.js 20\+/);
  assert.ok(!pkg.files.some((f) => f.includes('.node')), 'binaries ship in the npm/<triple> packages');
  for (const file of ['index.cjs', 'index.mjs', 'index.d.ts', 'lib/', 'better-sqlite3.cjs', 'better-sqlite3.mjs']) {
    assert.ok(pkg.files.includes(file), file);
  }
  assert.equal(pkg.scripts.prepack, 'node tools/check-binaries.mjs');
  assert.match(pkg.scripts.prepublishOnly, /check-binaries\.mjs --all && napi pre-publish -t npm/);
});

/** A copy of what `npm pack` needs (package.json, the guard, the loader), with npm/ as given. */
function packableCopy(t, withBinaries) {
  const dir = tempDir(t);
  for (const entry of ['package.json', 'tools', 'lib', 'index.cjs', 'index.mjs', 'index.d.ts', 'LICENSE', 'compat']) {
    cpSync(join(repoRoot, entry), join(dir, entry), { recursive: true });
  }
  for (const t of targets) {
    mkdirSync(join(dir, 'npm', t.dir), { recursive: true });
    cpSync(join(repoRoot, 'npm', t.dir, 'package.json'), join(dir, 'npm', t.dir, 'package.json'));
    if (withBinaries.includes(t.dir)) writeFileSync(join(dir, 'npm', t.dir, t.file), 'stand-in binary');
  }
  return dir;
}

function npm(cwd, ...args) {
  // npm is npm.cmd on Windows: only a shell finds it.
  return spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, shell: process.platform === 'win32' });
}

test('npm pack of the main package fails loudly without the host binary, and packs with it', (t) => {
  const bare = packableCopy(t, []);
  const refused = npm(bare, 'pack', '--dry-run');
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /REFUSING TO PACK/);
  assert.ok(refused.stderr.includes(`${join('npm', host, `triflux-native-store.${host}.node`)} is missing`), refused.stderr);

  const ready = packableCopy(t, [host]);
  const packed = npm(ready, 'pack', '--dry-run', '--json');
  assert.equal(packed.status, 0, packed.stderr);
  const files = JSON.parse(packed.stdout)[0].files.map((f) => f.path);
  assert.ok(files.includes('lib/native.cjs') && files.includes('index.cjs'), files.join(' '));
  assert.ok(!files.some((f) => f.endsWith('.node')), files.join(' '));
});

test('publishing needs every target: the guard in --all mode names each missing binary', (t) => {
  const dir = packableCopy(t, [host]);
  const result = spawnSync(process.execPath, ['tools/check-binaries.mjs', '--all'], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /REFUSING TO PUBLISH/);
  for (const t of targets.filter((x) => x.dir !== host)) assert.ok(result.stderr.includes(t.file), t.file);
  assert.ok(result.stderr.includes('npm run build:linux -- aarch64-unknown-linux-musl') || host === 'linux-arm64-musl');
  assert.ok(result.stderr.includes("the release workflow's artifact bindings-darwin-arm64"));
  assert.ok(!result.stderr.includes(`${host}.node is missing`));
  const complete = packableCopy(t, targets.map((x) => x.dir));
  const ok = spawnSync(process.execPath, ['tools/check-binaries.mjs', '--all'], { cwd: complete, encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
});

test('the guard also refuses platform packages whose version drifted from the main package', (t) => {
  const dir = packableCopy(t, [host]);
  const file = join(dir, 'npm', host, 'package.json');
  writeFileSync(file, readFileSync(file, 'utf8').replace(`"version": "${pkg.version}"`, '"version": "0.0.1"'));
  const result = spawnSync(process.execPath, ['tools/check-binaries.mjs'], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /version 0\.0\.1, expected/);
});

test('npm pack of a platform package without its binary fails', (t) => {
  const dir = tempDir(t);
  cpSync(join(repoRoot, 'npm', host), dir, { recursive: true });
  rmSync(join(dir, `triflux-native-store.${host}.node`), { force: true });
  const result = npm(dir, 'pack', '--dry-run');
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /ENOENT/);
  assert.ok(!existsSync(join(dir, `triflux-native-store-${host}-${pkg.version}.tgz`)));
});

test('the better-sqlite3 alias package re-exports the subpath and pins this exact version', () => {
  const dir = join(repoRoot, 'compat', 'better-sqlite3');
  const compat = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  assert.equal(compat.name, 'triflux-better-sqlite3');
  assert.equal(compat.version, pkg.version);
  assert.deepEqual(compat.dependencies, { [pkg.name]: pkg.version });
  assert.deepEqual(compat.engines, pkg.engines);
  assert.match(readFileSync(join(dir, 'index.cjs'), 'utf8'), /module\.exports = require\('triflux-native-store\/better-sqlite3'\);/);
  assert.match(readFileSync(join(dir, 'index.mjs'), 'utf8'), /export \{ default, SqliteError \} from 'triflux-native-store\/better-sqlite3';/);
  for (const file of compat.files) assert.ok(existsSync(join(dir, file)), file);
});
