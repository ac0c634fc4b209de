// Shared test helpers: fresh temp directories and fixture copies, all inside the repo's
// own files (tests never reach outside the repository).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { referenceDir, referenceMissing } from '../tools/reference.mjs';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The emulator this suite runs under ('qemu' or 'wine', set by test:platforms), or null. */
export const emulator = process.env.TRIFLUX_TEST_EMULATOR || null;

/** A fresh temp directory removed when the test ends. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'tfx-native-test-'));
  t.after(() => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      // Windows deletes no open file: a test that ends with its store still open (the
      // process exits soon) leaves its folder to the system's temp cleanup.
      if (process.platform !== 'win32' || (error.code !== 'EBUSY' && error.code !== 'EPERM')) throw error;
    }
  });
  return dir;
}

/** Copies fixtures/<name> into a temp dir and returns the copy's path. */
export function fixtureCopy(t, name) {
  const dir = tempDir(t);
  const target = join(dir, 'hub.db');
  copyFileSync(join(repoRoot, 'fixtures', name), target);
  return target;
}

/** Captures console.warn output while `fn` runs. */
export function captureWarnings(fn) {
  const original = console.warn;
  const seen = [];
  console.warn = (...args) => seen.push(args.join(' '));
  try {
    return { value: fn(), warnings: seen };
  } finally {
    console.warn = original;
  }
}

/** Runs fn and returns the error it throws (fails the test when it does not throw). */
export function thrown(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Busy-waits into the next millisecond, so time-ordered rows never tie. */
export function nextMs() {
  const start = Date.now();
  while (Date.now() === start) {}
}

const require = createRequire(import.meta.url);

// better-sqlite3 12 is the reference the differential tests compare with. It is a V8 C++
// addon built per Node ABI: npm's build serves the Node that installed it, and other Nodes
// use their own (tools/reference.mjs, built by npm's pretest; test:platforms cross-builds
// it for arm64). Its Windows binary needs MSVC (or GitHub's prebuilt one), so under Wine
// it has none. Those tests are skipped where it has no build, with the reason.
const referencePath = referenceDir();
/** Why the reference cannot run here, or false. For `test(name, { skip: referenceSkip }, …)`. */
export const referenceSkip = referenceMissing();
/** better-sqlite3's Database class for this Node, or null where `referenceSkip` says why. */
export const BetterSqlite3 = referencePath ? require(referencePath) : null;
/** What a child process opens a second connection with: better-sqlite3, else this package's own. */
export const secondConnection = referencePath ? require.resolve(referencePath) : join(repoRoot, 'better-sqlite3.cjs');

/**
 * The bytes the original stores for a lone surrogate (U+D800) on this Node, in hex: asked
 * of better-sqlite3, the reference, where it runs; elsewhere (Windows under Wine) by Node's
 * major version, the line V8 13 drew (Node 24: U+FFFD instead of the surrogate's own bytes).
 */
export function loneSurrogateHex() {
  if (BetterSqlite3) {
    const db = new BetterSqlite3(':memory:');
    try {
      return db.prepare('SELECT hex(?)').pluck().get('\ud800');
    } finally {
      db.close();
    }
  }
  return Number(process.versions.node.split('.')[0]) >= 24 ? 'EFBFBD' : 'EDA080';
}

// A second connection in a child process: better-sqlite3 bundles its own SQLite, and
// two SQLite copies in one process break each other's POSIX locks on close. Where
// better-sqlite3 has no build, this package's Database (a process of its own too).
export function sqlInChild(dbPath, sql, params) {
  const script = `const D = require(${JSON.stringify(secondConnection)});
const db = new D(process.argv[1]);
const st = db.prepare(process.argv[2]);
const out = st.reader ? st.get(...JSON.parse(process.argv[3])) : st.run(...JSON.parse(process.argv[3]));
db.close();
process.stdout.write(JSON.stringify(out ?? null));`;
  const r = spawnSync(process.execPath, ['-e', script, dbPath, sql, JSON.stringify(params)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * `npm pack` of the main package and of the host's platform package, the platform
 * package carrying this checkout's build (./triflux-native-store.<triple>.node) so the
 * tarballs install like published ones. Returns the folder and the two tarball paths.
 */
export function packWithLocalBinary(t) {
  const { hostTriple } = require('../lib/native.cjs');
  const triple = hostTriple();
  const npmDir = tempDir(t);
  for (const dir of readdirSync(join(repoRoot, 'npm'))) {
    mkdirSync(join(npmDir, dir));
    for (const file of readdirSync(join(repoRoot, 'npm', dir)).filter((f) => !f.endsWith('.node'))) {
      copyFileSync(join(repoRoot, 'npm', dir, file), join(npmDir, dir, file));
    }
  }
  const binary = `triflux-native-store.${triple}.node`;
  copyFileSync(join(repoRoot, binary), join(npmDir, triple, binary));
  const out = tempDir(t);
  const pack = (cwd) => {
    const r = spawnSync('npm', ['pack', '--silent', '--pack-destination', out], {
      cwd,
      encoding: 'utf8',
      // The prepack guard looks for the host binary in this npm/ folder instead.
      env: { ...process.env, TRIFLUX_NPM_DIR: npmDir },
      shell: process.platform === 'win32',
    });
    if (r.status !== 0) throw new Error(`npm pack in ${cwd} failed:\n${r.stderr}`);
  };
  pack(repoRoot);
  pack(join(npmDir, triple));
  const tarballs = readdirSync(out).filter((f) => f.endsWith('.tgz')).sort();
  return { dir: out, tarballs: tarballs.map((f) => join(out, f)) };
}

/** A JSON-comparable picture of a value that keeps JS types, key order and prototypes. */
export function picture(v, depth = 0) {
  if (v === undefined) return ['undefined'];
  if (v === null) return null;
  if (typeof v === 'number') return Object.is(v, -0) ? ['-0'] : Number.isNaN(v) ? ['NaN'] : ['number', String(v)];
  if (typeof v === 'bigint') return ['bigint', String(v)];
  if (typeof v === 'string') return ['string', v];
  if (typeof v === 'boolean') return ['boolean', v];
  if (typeof v === 'function') return ['function', v.name];
  if (Buffer.isBuffer(v)) return ['Buffer', v.toString('hex')];
  if (depth > 4) return ['deep'];
  if (Array.isArray(v)) return ['array', v.map((x) => picture(x, depth + 1))];
  const proto = Object.getPrototypeOf(v);
  const cls = proto === null ? 'null' : proto === Object.prototype ? 'Object' : Buffer.isBuffer(proto) ? 'Buffer' : proto.constructor?.name;
  return ['object', cls, Object.keys(v).map((k) => [k, picture(v[k], depth + 1)])];
}

/** What a call gives, as a picture: its value, or its error's class, name, code and message. */
export function outcome(fn) {
  try {
    return { value: picture(fn()) };
  } catch (e) {
    return { error: [e?.constructor?.name, e?.name, e?.code ?? null, e?.message] };
  }
}

/** The steps `script(D, dir, step)` records with `D`: each `step(label, fn)` as [label, outcome]. */
function recordSteps(t, D, script) {
  const steps = [];
  const dir = tempDir(t);
  const opened = [];
  const Wrapped = function (...args) {
    const db = new D(...args);
    opened.push(db);
    return db;
  };
  Wrapped.SqliteError = D.SqliteError;
  try {
    script(Wrapped, dir, (label, fn) => steps.push([label, outcome(fn)]));
  } finally {
    for (const db of opened) {
      try {
        if (db.open) db.close(); // a script may leave an iterator open: close is refused then
      } catch {}
    }
  }
  return steps;
}

/**
 * A test that runs `script(D, dir, step)` with better-sqlite3 and with each of `entries`
 * ([label, Database class] pairs); the recordings must be identical, step by step.
 */
export function differentialTest(name, script, entries) {
  test(name, { skip: referenceSkip }, (t) => {
    const reference = recordSteps(t, BetterSqlite3, script);
    assert.ok(reference.length > 0);
    for (const [entry, D] of entries) {
      const ours = recordSteps(t, D, script);
      assert.equal(ours.length, reference.length, `${entry}: number of steps`);
      for (let i = 0; i < reference.length; i++) {
        assert.deepEqual(ours[i], reference[i], `${entry}: step ${reference[i][0]}`);
      }
    }
  });
}
