// A hub must start without the binary: importing the package never throws, and
// createStore / new Database / uuidv7 / version() / readStats throw one Error that names the
// platform triple, the package that should provide it and the underlying load error.
// The binary is made "absent" or "unloadable" with the TRIFLUX_NATIVE_STORE_BINARY
// override, in child processes (a loaded addon cannot be unloaded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { repoRoot, tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const triple = require('../lib/native.cjs').hostTriple();
const platformPackage = `triflux-native-store-${triple}`;

function run(args, env) {
  const clean = { ...process.env };
  delete clean.TRIFLUX_NATIVE_STORE_BINARY;
  delete clean.NAPI_RS_NATIVE_LIBRARY_PATH;
  const result = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', env: { ...clean, ...env } });
  assert.equal(result.status, 0, result.stderr);
  return { out: JSON.parse(result.stdout.trim().split('\n').at(-1)), stderr: result.stderr };
}

const adapter = join(repoRoot, '__test__', 'fixtures', 'store-adapter.mjs');

test('hub fall-back: with the binary absent, the adapter loads and falls back to memory', (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'no-such-binary.node');
  const { out, stderr } = run([adapter, join(dir, 'hub.db')], { TRIFLUX_NATIVE_STORE_BINARY: missing });
  assert.equal(out.type, 'memory');
  assert.equal(out.error.name, 'Error');
  assert.equal(out.error.code, 'ERR_TRIFLUX_NATIVE_BINARY');
  assert.ok(out.error.message.includes(`native binary for ${triple}`), out.error.message);
  assert.ok(out.error.message.includes(`the package ${platformPackage} should provide it`), out.error.message);
  assert.ok(out.error.message.includes(missing), 'names the file it tried');
  assert.match(out.error.cause, /Cannot find module/);
  assert.match(stderr, /\[hub\] sqlite store unavailable, using the in-memory store/);
});

test('an unloadable binary (not a shared library) fails the same way, with the loader error', (t) => {
  const dir = tempDir(t);
  const broken = join(dir, `triflux-native-store.${triple}.node`);
  writeFileSync(broken, 'this is not a shared library');
  const { out } = run([adapter, join(dir, 'hub.db')], { NAPI_RS_NATIVE_LIBRARY_PATH: broken });
  assert.equal(out.type, 'memory');
  assert.ok(out.error.message.includes(platformPackage), out.error.message);
  assert.ok(out.error.message.includes('NAPI_RS_NATIVE_LIBRARY_PATH='), out.error.message);
  // Linux, Windows (Wine says "Bad EXE format"), macOS.
  assert.match(out.error.cause, /invalid ELF header|file too short|not a valid Win32 application|Bad EXE format|not a mach-o file/i);
});

test('an override naming a file that is not a .node file says so, and does not suggest setting the variable it is set in', (t) => {
  const dir = tempDir(t);
  const notes = join(dir, 'notes.txt');
  writeFileSync(notes, 'hello world\n');
  const { out } = run([adapter, join(dir, 'hub.db')], { TRIFLUX_NATIVE_STORE_BINARY: notes });
  assert.equal(out.type, 'memory');
  assert.equal(out.error.code, 'ERR_TRIFLUX_NATIVE_BINARY');
  assert.ok(out.error.message.includes(`TRIFLUX_NATIVE_STORE_BINARY=${notes}: ${notes} is not a native binary (a .node file)`), out.error.message);
  assert.ok(out.error.message.includes('TRIFLUX_NATIVE_STORE_BINARY is set, so only the file it names was tried'), out.error.message);
  assert.doesNotMatch(out.error.message, /Unexpected identifier|or set TRIFLUX_NATIVE_STORE_BINARY/);
});

test('the override pointing at a real binary is used, and the store works', (t) => {
  const dir = tempDir(t);
  const binary = join(repoRoot, `triflux-native-store.${triple}.node`);
  const { out } = run([adapter, join(dir, 'hub.db')], { TRIFLUX_NATIVE_STORE_BINARY: binary });
  assert.deepEqual(out, { type: 'sqlite', agent: 'a1', error: null });
});

test('every entry point throws the same descriptive Error; require and import never do', (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'gone.node');
  const dbPath = join(dir, 'sub', 'hub.db');
  const script = `
    const m = require('triflux-native-store');
    const Database = require('triflux-native-store/better-sqlite3');
    const errors = [];
    for (const f of [() => m.createStore(${JSON.stringify(dbPath)}), () => new m.Database(':memory:'), () => new Database(':memory:'), () => m.uuidv7(), () => m.version(), () => m.readStats(${JSON.stringify(dbPath)})]) {
      try { f(); errors.push(null); } catch (e) { errors.push(e.message); }
    }
    m.importBetterSqlite3().then(() => 'resolved', (e) => e.message).then((imported) => {
      console.log(JSON.stringify({ errors, imported, keys: Object.keys(m).sort(), sqliteError: typeof m.SqliteError }));
    });`;
  const { out } = run(['-e', script], { TRIFLUX_NATIVE_STORE_BINARY: missing });
  assert.deepEqual(out.keys, ['Database', 'SqliteError', 'checkpointStatus', 'createStore', 'importBetterSqlite3', 'readStats', 'uuidv7', 'version']);
  assert.equal(out.sqliteError, 'function');
  assert.equal(out.errors.length, 6);
  for (const message of [...out.errors, out.imported]) {
    assert.equal(message, out.errors[0]);
  }
  assert.ok(out.errors[0].includes(platformPackage) && out.errors[0].includes(missing), out.errors[0]);
  // createStore failed before creating the database's folder.
  assert.equal(existsSync(join(dir, 'sub')), false);
});
