// Helpers of the triflux-store tests: the command run as a user runs it (a child
// process), the hub played by another child (fixtures/hub-writer.mjs), and facts read from
// the files with this package's read-only Database or with better-sqlite3 in a child.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Database } from '../index.mjs';
import { referenceSkip, repoRoot, secondConnection } from './helpers.mjs';

export const BIN = join(repoRoot, 'bin', 'triflux-store.mjs');
const WRITER = join(repoRoot, '__test__', 'fixtures', 'hub-writer.mjs');

/**
 * Runs the command in a child process; resolves to { status, signal, stdout, stderr, ms }.
 * Other options (uid, gid, cwd) go to spawn.
 */
export function cli(args, { timeout = 60000, ...spawnOptions } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`triflux-store ${args.join(' ')} timed out\n${stderr}`));
    }, timeout);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A child that prints "<prefix>..." lines; resolves when a line starting with `word` appears. */
export function waitForLine(child, word) {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d) => {
      buffer += d;
      const line = buffer.split('\n').find((l) => l.startsWith(word));
      if (line !== undefined) {
        child.stdout.off('data', onData);
        resolve(line);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before printing "${word}"`)));
  });
}

/** The hub: a child writing audit messages (with their inbox rows) through createStore. */
export function startWriter(t, dbPath, { total = 0, perTx = 1, pauseMs = 20 } = {}) {
  const child = spawn(process.execPath, [WRITER, dbPath, String(total), String(perTx), String(pauseMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // Windows has no SIGUSR1, and its SIGTERM kills at once: there, the writer reads commands.
  const command = (signal, line) => (process.platform === 'win32' ? child.stdin.write(`${line}\n`) : child.kill(signal));
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  const ready = waitForLine(child, 'ready');
  const done = waitForLine(child, 'done').then((line) => Number(line.split(' ')[1]));
  return {
    ready,
    done,
    async pause() {
      const paused = waitForLine(child, 'paused');
      command('SIGUSR1', 'pause');
      return paused;
    },
    async stop() {
      command('SIGTERM', 'stop');
      return done;
    },
    /** SIGKILL, as a crash: resolves once the child is gone. */
    kill() {
      done.catch(() => {}); // it never prints "done" now
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return gone;
    },
  };
}

/** A second connection in a child that holds a read transaction until released. */
export async function holdReadTransaction(t, dbPath) {
  const script = `const { Database } = require(${JSON.stringify(join(repoRoot, 'index.cjs'))});
const db = new Database(process.argv[1]);
db.exec('BEGIN');
db.prepare('SELECT COUNT(*) FROM messages').get();
process.stdout.write('held\\n');
process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script, dbPath], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  await waitForLine(child, 'held');
  return () =>
    new Promise((resolve) => {
      child.on('exit', resolve);
      child.stdin.write('go\n');
    });
}

/** Runs a multi-statement SQL script on a file with better-sqlite3, in a child process. */
export function execInChild(dbPath, sql) {
  const script = `const D = require(${JSON.stringify(secondConnection)});
const db = new D(process.argv[1]);
${referenceSkip ? '' : 'db.unsafeMode(true); // lets the damage tests use writable_schema'}
db.exec(process.argv[2]);
db.close();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, dbPath, sql], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(stderr))));
  });
}

export function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Reads facts from a file with this package's read-only Database (the CLI runs in another process). */
export function readOnly(path, fn) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function tableCounts(path) {
  return readOnly(path, (db) => {
    const out = {};
    for (const name of db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all()) {
      out[name] = db.prepare(`SELECT COUNT(*) FROM "${name}"`).pluck().get();
    }
    return out;
  });
}

/** Asserts the one-line error contract: non-zero exit, one stderr line, no stack, no stdout. */
export function assertOneLineError(r, pattern, label) {
  assert.equal(r.status, 2, `${label}: exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', `${label}: nothing on stdout`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${label}: one line, got ${JSON.stringify(r.stderr)}`);
  assert.match(lines[0], /^triflux-store: /, label);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${label}: no stack trace`);
  assert.match(lines[0], pattern, label);
}
