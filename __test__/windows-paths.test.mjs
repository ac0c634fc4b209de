// What differs on Windows, exercised wherever the suite runs (test:platforms runs it on
// the Windows build under Wine; the release workflow on real Windows): drive-letter and
// backslash paths, folder names with spaces and non-ASCII letters, missing folders,
// SQLite's file locking between two processes, deleting or renaming an open database,
// triflux-store given Windows paths, and the loader's win32 package name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, win32 } from 'node:path';

import { createStore, Database } from '../index.mjs';
import { repoRoot, tempDir, thrown } from './helpers.mjs';

const require = createRequire(import.meta.url);
const windows = process.platform === 'win32';
const BIN = join(repoRoot, 'bin', 'triflux-store.mjs');
const INDEX = join(repoRoot, 'index.cjs');

/** A child node process; resolves to { status, stdout, stderr }. */
function child(args, { env } = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function agentRoundTrip(path, id) {
  const store = createStore(path);
  try {
    store.registerAgent({ agent_id: id, cli: 'codex' });
    return store.getAgent(id).agent_id;
  } finally {
    store.close();
  }
}

test('a database path with a drive letter and backslashes', { skip: !windows && 'drive letters and backslash separators exist only in Windows paths' }, (t) => {
  const dir = tempDir(t);
  assert.match(dir, /^[A-Za-z]:\\/, 'the temp folder is a drive-letter path');
  const backslashed = win32.join(dir, 'hub', 'hub.db');
  assert.equal(agentRoundTrip(backslashed, 'a1'), 'a1');
  assert.ok(existsSync(backslashed));
  // The same file through forward slashes and a lower-case drive letter.
  const forward = (dir[0].toLowerCase() + dir.slice(1)).replaceAll('\\', '/') + '/hub/hub.db';
  const db = new Database(forward, { readonly: true, fileMustExist: true });
  assert.equal(db.prepare('SELECT agent_id FROM agents').pluck().get(), 'a1');
  db.close();
});

test('folder names with spaces and non-ASCII letters, also through a child process argv', async (t) => {
  const dir = join(tempDir(t), 'hub data ü 日本', 'ñandú dir');
  const path = join(dir, 'hub é.db');
  assert.equal(agentRoundTrip(path, 'a1'), 'a1');
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.db')), ['hub é.db']);
  const script = `const { createStore } = require(${JSON.stringify(INDEX)});
const s = createStore(process.argv[1]); s.registerAgent({ agent_id: 'a2', cli: 'codex' });
process.stdout.write(s.getAgent('a1').agent_id); s.close();`;
  const r = await child(['-e', script, path]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'a1');
  const db = new Database(path, { readonly: true });
  assert.deepEqual(db.prepare('SELECT agent_id FROM agents ORDER BY agent_id').pluck().all(), ['a1', 'a2']);
  db.close();
});

test('createStore creates every missing folder, and says which path it cannot use', (t) => {
  const base = tempDir(t);
  const path = join(base, 'a', 'b c', 'd', 'hub.db');
  assert.equal(agentRoundTrip(path, 'x'), 'x');
  assert.ok(existsSync(join(base, 'a', 'b c', 'd', 'hub.db')));
  // A file where a folder should be: a clear error, and that file left as it was.
  writeFileSync(join(base, 'plain'), 'not a folder');
  const error = thrown(() => createStore(join(base, 'plain', 'hub.db')));
  assert.match(error.code ?? '', /^(EEXIST|ENOTDIR|EPERM|ENOENT)$/, `${error.code}: ${error.message}`);
  assert.ok(error.message.includes('plain'), error.message);
  assert.equal(readFileSync(join(base, 'plain'), 'utf8'), 'not a folder');
});

/** A second process that holds the write lock (BEGIN IMMEDIATE) for `ms`, then commits a row. */
function holdWriteLock(path, ms) {
  const script = `const { Database } = require(${JSON.stringify(INDEX)});
const db = new Database(process.argv[1]);
db.exec('BEGIN IMMEDIATE');
db.prepare("INSERT INTO agents (agent_id, cli, status, last_seen_ms, lease_expires_ms) VALUES ('holder', 'codex', 'online', 0, 0)").run();
process.stdout.write('locked\\n');
setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, Number(process.argv[2]));`;
  const c = spawn(process.execPath, ['-e', script, path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const locked = new Promise((resolve, reject) => {
    c.stdout.setEncoding('utf8').on('data', (d) => d.includes('locked') && resolve());
    c.on('exit', (code) => reject(new Error(`lock holder exited (${code}) before locking`)));
  });
  const exited = new Promise((resolve) => c.on('exit', resolve));
  return { locked, exited };
}

test('two processes on one file: a write waits for the other process\'s lock, or fails with SQLITE_BUSY past its timeout', async (t) => {
  const path = join(tempDir(t), 'shared.db');
  createStore(path).close(); // the schema, so the holder can insert
  const holder = holdWriteLock(path, 1500);
  await holder.locked;

  // A short timeout: SQLITE_BUSY, a clear error, and nothing written.
  const impatient = new Database(path, { timeout: 100 });
  const busy = thrown(() => impatient.prepare("INSERT INTO agents (agent_id, cli, status, last_seen_ms, lease_expires_ms) VALUES ('b', 'codex', 'online', 0, 0)").run());
  assert.equal(busy.code, 'SQLITE_BUSY');
  assert.match(busy.message, /database is locked/);
  impatient.close();

  // The store (busy_timeout 5000) waits for the holder's commit, then writes.
  const store = createStore(path);
  const started = Date.now();
  store.registerAgent({ agent_id: 'waiter', cli: 'codex' });
  const waited = Date.now() - started;
  assert.equal(await holder.exited, 0);
  assert.ok(waited >= 100, `the write waited for the lock (${waited} ms)`);
  assert.equal(store.getAgent('holder').agent_id, 'holder');
  assert.equal(store.getAgent('waiter').agent_id, 'waiter');
  assert.equal(store.getAgent('b'), null);
  store.close();
});

test('Windows refuses to delete or rename an open database; the store keeps working and its data', { skip: !windows && 'POSIX systems let a process delete or rename a file another one has open' }, (t) => {
  const path = join(tempDir(t), 'open.db');
  const store = createStore(path);
  store.registerAgent({ agent_id: 'a1', cli: 'codex' });
  for (const attempt of [() => unlinkSync(path), () => renameSync(path, `${path}.moved`)]) {
    const error = thrown(attempt);
    assert.match(error.code, /^(EBUSY|EPERM|EACCES)$/, `${error.code}: ${error.message}`);
  }
  store.registerAgent({ agent_id: 'a2', cli: 'codex' });
  assert.equal(store.getAgent('a1').agent_id, 'a1');
  store.close();
  // Closed: every handle (the file, -wal, -shm) is released, so both work now.
  renameSync(path, `${path}.moved`);
  const db = new Database(`${path}.moved`, { readonly: true });
  assert.deepEqual(db.prepare('SELECT agent_id FROM agents ORDER BY agent_id').pluck().all(), ['a1', 'a2']);
  db.close();
  unlinkSync(`${path}.moved`);
});

test('close releases every handle on the database files (what lets Windows delete them)', { skip: process.platform !== 'linux' && 'reads the open files from /proc/self/fd (Linux); on Windows the test above deletes the files' }, (t) => {
  const path = join(tempDir(t), 'handles.db');
  const openOnPath = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } }).filter((p) => p.startsWith(path));
  const store = createStore(path);
  store.registerAgent({ agent_id: 'a1', cli: 'codex' });
  assert.ok(openOnPath().length > 0, 'the open store holds the file');
  store.close();
  assert.deepEqual(openOnPath(), []);
});

test('triflux-store with a path that has spaces and non-ASCII letters (drive-letter and backslashes on Windows)', async (t) => {
  const dir = join(tempDir(t), 'hub data ü');
  mkdirSync(dir);
  const path = join(dir, 'hub.db');
  copyFileSync(join(repoRoot, 'fixtures', 'hub-v6.db'), path);
  if (windows) assert.match(path, /^[A-Za-z]:\\.*\\hub data ü\\hub\.db$/);
  const info = await child([BIN, 'info', path, '--json']);
  assert.equal(info.status, 0, info.stderr);
  assert.equal(JSON.parse(info.stdout).schema_version, 6);
  const copy = join(dir, 'copy ü.db');
  const backup = await child([BIN, 'backup', path, copy, '--json']);
  assert.equal(backup.status, 0, backup.stderr);
  assert.equal(JSON.parse(backup.stdout).quick_check, 'ok');
  const check = await child([BIN, 'check', copy]);
  assert.equal(check.status, 0, check.stderr);
  const missing = await child([BIN, 'info', join(dir, 'nope', 'hub.db')]);
  assert.equal(missing.status, 2);
  assert.ok(missing.stderr.includes(join(dir, 'nope', 'hub.db')), missing.stderr);
});

test('triflux-store backup --force onto a database another process has open: replaced on POSIX, a clear refusal on Windows', async (t) => {
  const dir = tempDir(t);
  const source = join(dir, 'hub.db');
  copyFileSync(join(repoRoot, 'fixtures', 'hub-v6.db'), source);
  const out = join(dir, 'busy.db');
  const holder = createStore(out);
  holder.registerAgent({ agent_id: 'kept', cli: 'codex' });
  const r = await child([BIN, 'backup', source, out, '--force']);
  if (windows) {
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /open in another process/);
    assert.ok(r.stderr.includes(out), r.stderr);
    assert.equal(holder.getAgent('kept').agent_id, 'kept', 'the open database is untouched');
  } else {
    assert.equal(r.status, 0, r.stderr);
  }
  holder.close();
});

/** A copy of the package's JS (no binary) in a temp folder, with `node_modules/` to fill. */
function packageWithoutBinary(t) {
  const dir = tempDir(t);
  for (const entry of ['package.json', 'index.cjs', 'lib']) cpSync(join(repoRoot, entry), join(dir, entry), { recursive: true });
  return dir;
}

// Elsewhere than Windows the child pretends to be win32 x64 (the loader reads only
// process.platform and process.arch); the binary it loads is this platform's own.
const asWindows = windows ? '' : "Object.defineProperty(process, 'platform', { value: 'win32' }); Object.defineProperty(process, 'arch', { value: 'x64' });";
function loaderChild(dir, body) {
  const env = { ...process.env };
  delete env.TRIFLUX_NATIVE_STORE_BINARY;
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH;
  const script = `${asWindows}
const m = require(${JSON.stringify(join(dir, 'index.cjs'))});
const native = require(${JSON.stringify(join(dir, 'lib', 'native.cjs'))});
${body}`;
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env });
}

test('the loader looks for triflux-native-store-win32-x64-msvc on Windows x64, and loads it from there', (t) => {
  const dir = packageWithoutBinary(t);
  const { version } = require('../package.json');
  const pkgDir = join(dir, 'node_modules', 'triflux-native-store-win32-x64-msvc');
  mkdirSync(pkgDir, { recursive: true });
  const file = 'triflux-native-store.win32-x64-msvc.node';
  writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: 'triflux-native-store-win32-x64-msvc', version, main: file }));
  copyFileSync(require('../lib/native.cjs').loadedInfo().binary, join(pkgDir, file));
  const r = loaderChild(dir, 'console.log(JSON.stringify({ triple: native.hostTriple(), info: m.version() }));');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.triple, 'win32-x64-msvc');
  assert.equal(out.info.target, 'win32-x64-msvc');
  assert.equal(out.info.binary, join(pkgDir, file));
});

test('without that package the loader names it, says how to install it, and throws one clear error', (t) => {
  const dir = packageWithoutBinary(t);
  const r = loaderChild(dir, `try { m.createStore(${JSON.stringify(join(dir, 'x', 'hub.db'))}); console.log('loaded'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, triple: e.triple, packageName: e.packageName })); }`);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.code, 'ERR_TRIFLUX_NATIVE_BINARY');
  assert.equal(out.triple, 'win32-x64-msvc');
  assert.equal(out.packageName, 'triflux-native-store-win32-x64-msvc');
  assert.match(out.message, /cannot load the native binary for win32-x64-msvc: the package triflux-native-store-win32-x64-msvc should provide it/);
  assert.match(out.message, /TRIFLUX_NATIVE_STORE_BINARY/);
  assert.equal(existsSync(join(dir, 'x')), false, 'no folder made before the binary loads');
});
