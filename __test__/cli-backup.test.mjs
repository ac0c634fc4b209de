// triflux-store backup, run as a user runs it (child processes): copies of the fixtures,
// files a hub-writer child is writing or was killed writing, and interrupted copies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';

import { main } from '../lib/cli/main.mjs';
import { assertOneLineError, BIN, cli, execInChild, readOnly, sha256, startWriter, tableCounts } from './cli-helpers.mjs';
import { fixtureCopy, tempDir } from './helpers.mjs';

// --- backup ---

test('backup: a verified copy with the same rows; plain progress lines when not on a terminal', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const before = sha256(db);
  const out = join(tempDir(t), 'copy.db');
  const r = await cli(['backup', db, out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^backup: 100% \((\d+) of \1 pages\)$/m);
  assert.doesNotMatch(r.stderr, /\r/);
  assert.match(r.stdout, /^quick_check +ok$/m);
  assert.ok(!existsSync(`${out}-wal`) && !existsSync(`${out}-shm`), 'the copy is one file');
  assert.deepEqual(tableCounts(out), tableCounts(db));
  assert.equal(sha256(db), before, 'the source is not changed');
  // The copy is clean by the command's own check.
  assert.equal((await cli(['check', out])).status, 0);

  const again = await cli(['backup', db, out]);
  assertOneLineError(again, /already exists \(pass --force/, 'existing out');
  const forced = await cli(['backup', db, out, '--force', '--vacuum', '--json']);
  assert.equal(forced.status, 0, forced.stderr);
  const j = JSON.parse(forced.stdout);
  assert.equal(j.mode, 'vacuum');
  assert.equal(j.quick_check, 'ok');
  assert.deepEqual(j.tables, tableCounts(db));
  assert.equal(j.bytes, statSync(out).size);
  assertOneLineError(await cli(['backup', db, join(tempDir(t), 'no', 'such', 'dir.db')]), /directory does not exist/, 'missing dir');
  assertOneLineError(await cli(['backup', db, db, '--force']), /is the database itself/, 'same file');
});

test('backup --vacuum compacts: a file with free pages gives a smaller copy', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  await execInChild(db, `CREATE TABLE scratch (b BLOB); INSERT INTO scratch SELECT randomblob(4000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200) SELECT i FROM c); DROP TABLE scratch;`);
  const free = readOnly(db, (d) => d.pragma('freelist_count', { simple: true }));
  assert.ok(free > 100);
  const dir = tempDir(t);
  const plain = JSON.parse((await cli(['backup', db, join(dir, 'plain.db'), '--json'])).stdout);
  const vacuumed = JSON.parse((await cli(['backup', db, join(dir, 'vacuum.db'), '--vacuum', '--json'])).stdout);
  assert.equal(plain.pages - vacuumed.pages, free);
  assert.deepEqual(vacuumed.tables, plain.tables);
});

test('backup while the hub writes: the copy is consistent (integrity, one inbox row per message)', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  // Enough pages for many steps.
  const fill = startWriter(t, db, { total: 8000, perTx: 1000, pauseMs: 0 });
  const filled = await fill.done;
  const startCount = readOnly(db, (d) => d.prepare('SELECT COUNT(*) FROM messages').pluck().get());
  const writer = startWriter(t, db, { total: 0, perTx: 3, pauseMs: 2 });
  await writer.ready;
  const out = join(tempDir(t), 'live-copy.db');
  const r = await cli(['backup', db, out, '--json', '--step', '20']);
  const written = await writer.stop();
  assert.equal(r.status, 0, r.stderr);
  assert.ok(filled === 8000 && written > 0);
  const result = JSON.parse(r.stdout);
  assert.equal(result.quick_check, 'ok');
  assert.ok(result.steps > 1, 'the copy took several steps');
  const endCount = readOnly(db, (d) => d.prepare('SELECT COUNT(*) FROM messages').pluck().get());
  const copy = readOnly(out, (d) => ({
    integrity: d.pragma('integrity_check', { simple: true }),
    messages: d.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
    orphanMessages: d.prepare("SELECT COUNT(*) FROM messages m WHERE from_agent = 'writer' AND NOT EXISTS (SELECT 1 FROM message_inbox i WHERE i.message_id = m.id)").pluck().get(),
    orphanInbox: d.prepare("SELECT COUNT(*) FROM message_inbox i WHERE agent_id = 'reader' AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = i.message_id)").pluck().get(),
  }));
  assert.equal(copy.integrity, 'ok');
  assert.equal(copy.orphanMessages, 0);
  assert.equal(copy.orphanInbox, 0);
  assert.ok(copy.messages >= startCount && copy.messages <= endCount, `${startCount} <= ${copy.messages} <= ${endCount}`);
  assert.equal(copy.messages, result.tables.messages);
  assert.equal((await cli(['check', out])).status, 0);
});

test('backup draws a progress bar on a terminal', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const out = join(tempDir(t), 'tty.db');
  const sink = () => {
    const chunks = [];
    return Object.assign(new Writable({ write(c, _e, cb) { chunks.push(String(c)); cb(); } }), { text: () => chunks.join('') });
  };
  const stdout = sink();
  const stderr = sink();
  const code = await main(['backup', db, out, '--step', '10'], { stdout, stderr, isTTY: true });
  assert.equal(code, 0, stderr.text());
  const bar = stderr.text();
  assert.match(bar, /\r\[#{30}\] 100% {2}(\d+)\/\1 pages\n$/);
  assert.match(bar, /\r\[#*-+\] +\d+%/, 'a partial bar was drawn before the end');
  assert.match(stdout.text(), /^quick_check +ok$/m);
});

test('backup never writes the database or a file of its set, even with --force (a killed writer left transactions in the -wal)', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const dir = dirname(db);
  const writer = startWriter(t, db, { total: 0, perTx: 50, pauseMs: 0 });
  await writer.ready;
  await new Promise((resolve) => setTimeout(resolve, 300));
  await writer.kill();
  assert.ok(statSync(`${db}-wal`).size > 0, 'the -wal holds what the writer committed');
  const counts = tableCounts(db);
  linkSync(`${db}-wal`, join(dir, 'wal-hard'));
  linkSync(db, join(dir, 'db-hard'));
  mkdirSync(join(dir, 'sub'));
  // Symbolic links need a privilege on Windows; elsewhere anyone may make them.
  const symlinks = process.platform !== 'win32';
  if (symlinks) {
    symlinkSync(`${db}-wal`, join(dir, 'wal-link'));
    symlinkSync(db, join(dir, 'sub', 'linked.db'));
  }
  const before = ['', '-wal', '-shm'].map((s) => sha256(`${db}${s}`));
  const refused = [
    [db, db, /is the database itself/],
    [db, `${db}-wal`, /is the database's -wal file/],
    [db, `${db}-shm`, /is the database's -shm file/],
    [db, `${db}-journal`, /is the database's -journal file/],
    [db, join(dir, 'wal-hard'), /is the database's -wal file/],
    [db, join(dir, 'db-hard'), /is the database itself/],
    [db, join(dir, 'sub', '..', 'hub.db-wal'), /is the database's -wal file/],
    ...(symlinks
      ? [
          [db, join(dir, 'wal-link'), /is the database's -wal file/],
          [join(dir, 'sub', 'linked.db'), `${db}-wal`, /is the database's -wal file/],
        ]
      : []),
  ];
  for (const [source, out, pattern] of refused) {
    for (const extra of [[], ['--force'], ['--force', '--vacuum']]) {
      const r = await cli(['backup', source, out, ...extra]);
      assertOneLineError(r, pattern, `backup ${source} ${out} ${extra.join(' ')}`);
      assert.match(r.stderr, /refused, even with --force/);
    }
  }
  const named = join(dir, 'copy-wal');
  copyFileSync(db, named);
  assertOneLineError(await cli(['backup', named, join(dir, 'copy'), '--force']), /its -wal file would be the database itself/, 'out-wal is the database');
  assert.deepEqual(['', '-wal', '-shm'].map((s) => sha256(`${db}${s}`)), before, 'the database and its -wal are untouched');
  assert.deepEqual(tableCounts(db), counts, 'every committed row is still there');
  const ok = await cli(['backup', db, join(dir, 'fine.db'), '--json']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout).tables, counts, 'a copy elsewhere has the -wal transactions too');
});

/** A hub database of about 20 MB (a hub database plus a table of random blobs). */
async function largeDatabase(t) {
  const db = fixtureCopy(t, 'hub-v6.db');
  await execInChild(
    db,
    'CREATE TABLE filler (b BLOB); INSERT INTO filler SELECT randomblob(3000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 6000) SELECT i FROM c);',
  );
  return db;
}

test('an interrupted backup (SIGINT, SIGTERM) leaves no file: <out> is not written, the temporary copy is removed', { skip: process.platform === 'win32' && 'POSIX signals (SIGSTOP, SIGINT to a child) do not exist on Windows' }, async (t) => {
  const db = await largeDatabase(t);
  const dir = tempDir(t);
  const out = join(dir, 'copy.db');
  for (const [signal, code, extra, marker] of [
    ['SIGINT', 130, ['--step', '1'], 'backup: 0%'],
    ['SIGTERM', 143, ['--step', '1'], 'backup: 0%'],
    ['SIGINT', 130, ['--vacuum'], 'backup: VACUUM INTO'],
  ]) {
    const child = spawn(process.execPath, [BIN, 'backup', db, out, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.exitCode === null && child.kill('SIGKILL'));
    let stderr = '';
    const started = new Promise((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d) => {
        stderr += d;
        if (stderr.includes(marker)) resolve();
      }),
    );
    const exited = new Promise((resolve) => child.on('close', (status, sig) => resolve({ status, sig })));
    await started;
    // Stopped while copying, the signal is certain to arrive before the copy ends.
    child.kill('SIGSTOP');
    assert.ok(readdirSync(dir).some((f) => f.endsWith('.tmp')), 'the copy goes to a temporary file');
    child.kill(signal);
    child.kill('SIGCONT');
    const { status } = await exited;
    assert.equal(status, code, `${signal} ${extra.join(' ')}: ${stderr}`);
    assert.match(stderr, new RegExp(`backup stopped by ${signal}: the temporary copy was removed, .*copy\\.db was not written`));
    assert.deepEqual(readdirSync(dir), [], `${signal}: nothing is left in the directory`);
  }
  const r = await cli(['backup', db, out, '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(readdirSync(dir), ['copy.db'], 'the next run needs no --force');
  assert.equal(JSON.parse(r.stdout).quick_check, 'ok');
});
