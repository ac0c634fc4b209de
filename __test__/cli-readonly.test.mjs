// triflux-store on a database it may read but not lock the usual way: a directory its user
// cannot write (another user's hub, read-only media), where SQLite cannot create the -shm
// of a WAL file or roll back a -journal. Run as root, the commands run as an unprivileged
// user (uid 65534) on root's files; run as anyone else, in a directory made read-only for
// its owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, cli, readOnly, sha256, startWriter, tableCounts } from './cli-helpers.mjs';
import { fixtureCopy, repoRoot } from './helpers.mjs';

const NOBODY = 65534;
const asRoot = process.platform !== 'win32' && process.getuid() === 0;
const windows = process.platform === 'win32' && 'POSIX permissions: a directory cannot be made unwritable for its owner on Windows';
const user = asRoot ? { uid: NOBODY, gid: NOBODY } : {};

/** Why the unprivileged user cannot run this checkout (a home directory closed to others), or null. */
function unreadableCheckout() {
  if (!asRoot) return null;
  const r = spawnSync(process.execPath, [BIN, '--version'], { ...user, encoding: 'utf8' });
  return r.status === 0 ? null : `uid ${NOBODY} cannot run this checkout (${(r.stderr || r.error?.message || '').split('\n')[0]})`;
}
const cannotRun = windows || unreadableCheckout() || false;

/**
 * A copy of `fixture` in a directory the commands' user cannot write, and a directory it
 * can write (for backups). Returns { db, place, outDir }.
 */
function readOnlyPlace(t, fixture = 'hub-v6.db') {
  const root = mkdtempSync(join(tmpdir(), 'tfx-native-test-'));
  const place = join(root, 'hub');
  // The directory made writable again first, or its files could not be removed.
  t.after(() => {
    chmodSync(place, 0o755);
    rmSync(root, { recursive: true, force: true });
  });
  const outDir = join(root, 'out');
  mkdirSync(place);
  mkdirSync(outDir);
  const db = join(place, 'hub.db');
  copyFileSync(fixtureCopy(t, fixture), db);
  if (asRoot) {
    chmodSync(root, 0o755);
    chmodSync(place, 0o755);
    chmodSync(db, 0o644);
    chmodSync(outDir, 0o777);
  } else {
    chmodSync(place, 0o555);
  }
  return { db, place, outDir };
}

/** Makes the files in `place` (written by this process) readable by the commands' user. */
function shareFiles(place) {
  if (asRoot) for (const f of readdirSync(place)) chmodSync(join(place, f), 0o644);
}

test('every read-only command reads a WAL file in a directory it cannot write: immutable, and one line says so', { skip: cannotRun }, async (t) => {
  const { db, place, outDir } = readOnlyPlace(t);
  const before = sha256(db);
  // What the commands print where SQLite can lock the file as usual.
  const reference = fixtureCopy(t, 'hub-v6.db');
  const now = String(readOnly(reference, (d) => d.prepare('SELECT MIN(lease_expires_ms) FROM agents').pluck().get()));
  const runs = [
    ['info', '--json'],
    ['stats', '--json'],
    ['agents', '--json', '--now', now],
    ['roles', '--json', '--now', now],
    ['tail', '--once', '--json', '-n', '100'],
    ['check', '--json'],
  ];
  for (const [name, ...args] of runs) {
    const want = await cli([name, reference, ...args]);
    assert.equal(want.status, 0, want.stderr);
    const got = await cli([name, db, ...args], user);
    assert.equal(got.status, 0, `${name}: ${got.stderr}`);
    const notes = got.stderr.trimEnd().split('\n');
    assert.equal(notes.length, 1, `${name}: one line on stderr, got ${JSON.stringify(got.stderr)}`);
    assert.match(notes[0], /^triflux-store: note: .*hub\.db is read immutable \(as it is on disk, without locks\): SQLite cannot share-lock it here \(SQLITE_\w+\) and it has no -wal to read$/);
    const clean = (text) => text.replaceAll(reference, '<db>').replaceAll(db, '<db>');
    if (name === 'info') {
      const [a, b] = [JSON.parse(want.stdout), JSON.parse(got.stdout)];
      // The usual read-only open leaves an empty -wal beside a WAL file (SQLite's doing); the immutable one nothing.
      assert.deepEqual({ ...b, file: null, opened: null, wal_size: null }, { ...a, file: null, opened: null, wal_size: null });
      assert.deepEqual([a.opened, b.opened, b.wal_size], ['read-only', 'immutable', null]);
    } else {
      assert.equal(clean(got.stdout), clean(want.stdout), name);
    }
  }
  const copy = join(outDir, 'copy.db');
  const backup = await cli(['backup', db, copy, '--json'], user);
  assert.equal(backup.status, 0, backup.stderr);
  assert.deepEqual(tableCounts(copy), tableCounts(reference));
  assert.deepEqual(readdirSync(place), ['hub.db'], 'no -wal, -shm or other file was created beside it');
  assert.equal(sha256(db), before);
});

test('a -wal with transactions but no -shm, in a directory it cannot write: refused, never read without the -wal', { skip: cannotRun }, async (t) => {
  const { db, place } = readOnlyPlace(t);
  chmodSync(place, 0o755);
  const writer = startWriter(t, db, { total: 0, perTx: 10, pauseMs: 0 });
  await writer.ready;
  await writer.kill();
  rmSync(`${db}-shm`);
  if (!asRoot) chmodSync(place, 0o555);
  shareFiles(place);
  assert.ok(statSync(`${db}-wal`).size > 4096, 'the killed writer left transactions in the -wal');
  for (const name of ['info', 'stats', 'check']) {
    const r = await cli([name, db], user);
    assert.equal(r.status, 2, `${name}: ${r.stdout}`);
    assert.match(r.stderr, /^triflux-store: .*hub\.db: cannot be read here: its -wal holds transactions and SQLite cannot open its -shm/);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1);
  }
});

test('a -journal of a transaction a killed writer left (rollback-journal file) in a directory it cannot write: refused, never read half-written', { skip: cannotRun }, async (t) => {
  const { db, place } = readOnlyPlace(t, 'hub-v5.db');
  chmodSync(place, 0o755);
  // A transaction larger than the page cache writes pages into the file before its commit.
  const script = `const { Database } = require(${JSON.stringify(join(repoRoot, 'index.cjs'))});
const db = new Database(process.argv[1]);
db.pragma('cache_size = 1');
db.exec('BEGIN');
const insert = db.prepare("INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, payload_json, status) VALUES (?, 'event', 'w', 'r', 't', 5, 1, 1, 2, 'c', 't', ?, 'queued')");
for (let i = 0; i < 2000; i++) insert.run('j' + i, 'x'.repeat(500));
process.kill(process.pid, 'SIGKILL');`;
  assert.equal(spawnSync(process.execPath, ['-e', script, db]).signal, 'SIGKILL');
  if (!asRoot) chmodSync(place, 0o555);
  shareFiles(place);
  assert.ok(statSync(`${db}-journal`).size > 0, 'the killed writer left its rollback journal');
  const r = await cli(['info', db], user);
  assert.equal(r.status, 2, r.stdout);
  assert.match(r.stderr, /^triflux-store: .*hub\.db: cannot be read here: its -journal holds an interrupted transaction that SQLite must roll back first \(SQLITE_READONLY_ROLLBACK\)/);
});

test("another user's running hub: its -wal and -shm are read (shared, read-only), not the file alone", { skip: cannotRun || (!asRoot && 'needs a second user: the hub runs as root, the command as uid 65534') }, async (t) => {
  const { db, place } = readOnlyPlace(t);
  const writer = startWriter(t, db, { total: 0, perTx: 5, pauseMs: 5 });
  await writer.ready;
  shareFiles(place);
  const seen = readOnly(db, (d) => d.prepare("SELECT COUNT(*) FROM messages WHERE from_agent = 'writer'").pluck().get());
  const r = await cli(['tail', db, '--once', '--json', '-n', '1000000', '--agent', 'writer'], user);
  const written = await writer.stop();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'no immutable open: the hub is read through its -wal');
  const rows = r.stdout.trim().split('\n');
  assert.ok(rows.length >= seen && rows.length <= written, `${seen} <= ${rows.length} <= ${written}`);
});
