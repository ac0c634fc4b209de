// triflux-store check and checkpoint, run as a user runs them (child processes), on
// copies of the fixtures, damaged files and files a hub-writer child is writing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { createStore } from '../index.mjs';
import { assertOneLineError, cli, execInChild, holdReadTransaction, readOnly, sha256, startWriter } from './cli-helpers.mjs';
import { fixtureCopy, referenceSkip, repoRoot, tempDir } from './helpers.mjs';

// --- check ---

test('check: a v6 file and a migrated v5 file are clean (exit 0)', async (t) => {
  const v6 = fixtureCopy(t, 'hub-v6.db');
  const r = await cli(['check', v6]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^integrity_check +ok$/m);
  assert.match(r.stdout, /^foreign_key_check +ok$/m);
  assert.match(r.stdout, /^schema v6 +ok \(\d+ tables, \d+ columns, \d+ indexes compared\)$/m);
  assert.match(r.stdout, /\nclean\n$/);
  const j = JSON.parse((await cli(['check', v6, '--json', '--quick'])).stdout);
  assert.equal(j.clean, true);
  assert.equal(j.integrity_mode, 'quick_check');
  assert.deepEqual(j.findings, []);
  // The expected schema counts come from the store's own schema.
  const reference = createStore(join(tempDir(t), 'fresh.db'));
  const tables = reference.db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").pluck().get();
  reference.close();
  assert.equal(j.schema_compared.tables, tables);

  const v5 = fixtureCopy(t, 'hub-v5.db');
  const originalWarn = console.warn;
  console.warn = () => {};
  createStore(v5).close(); // the hub's migration
  console.warn = originalWarn;
  const m = await cli(['check', v5, '--json']);
  assert.equal(m.status, 0, m.stdout);
  assert.equal(JSON.parse(m.stdout).clean, true);
});

test('check: a file with the large-log indexes is clean, and one missing one of them is not', async (t) => {
  const path = join(tempDir(t), 'large.db');
  const store = createStore(path);
  store.db.transaction(() => {
    for (let i = 0; i < 10_000; i++) store.auditLog({ type: 'event', from: 'a', to: 'b', topic: 't' });
  })();
  store.sweepExpired(); // adds the large-log indexes
  store.close();
  const r = await cli(['check', path, '--json']);
  assert.equal(r.status, 0, r.stdout);
  assert.deepEqual(JSON.parse(r.stdout).findings, []);
  await execInChild(path, 'DROP INDEX idx_messages_status_time');
  const m = await cli(['check', path, '--json']);
  assert.equal(m.status, 1);
  assert.deepEqual(JSON.parse(m.stdout).findings.map((f) => `${f.kind} ${f.name}`), ['missing_index idx_messages_status_time']);
});

test('check names every finding of an old schema and exits 1', async (t) => {
  const v4 = fixtureCopy(t, 'hub-v4.db');
  const before = sha256(v4);
  const r = await cli(['check', v4, '--json']);
  assert.equal(r.status, 1);
  const out = JSON.parse(r.stdout);
  assert.equal(out.clean, false);
  const names = out.findings.map((f) => `${f.kind} ${f.name}`);
  // What the v4 file lacks, read from the file and from a fresh store.
  const have = readOnly(v4, (d) => new Set(d.prepare("SELECT name FROM sqlite_master WHERE type='table'").pluck().all()));
  const fresh = createStore(join(tempDir(t), 'fresh.db'));
  const wantTables = fresh.db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").pluck().all();
  const agentColumns = fresh.db.pragma('table_info(agents)').map((c) => c.name);
  fresh.close();
  const v4AgentColumns = readOnly(v4, (d) => d.pragma('table_info(agents)').map((c) => c.name));
  for (const table of wantTables.filter((n) => !have.has(n))) assert.ok(names.includes(`missing_table ${table}`), table);
  for (const col of agentColumns.filter((c) => !v4AgentColumns.includes(c))) assert.ok(names.includes(`missing_column agents.${col}`), col);
  assert.ok(names.includes('schema_version _meta.schema_version'));
  const human = await cli(['check', v4]);
  assert.equal(human.status, 1);
  assert.match(human.stdout, new RegExp(`NOT CLEAN: ${out.findings.length} findings`));
  assert.equal(sha256(v4), before, 'check never changes the file');
});

test('check finds a damaged index, an extra column, a dropped index and a foreign key violation', { skip: referenceSkip }, async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  await execInChild(
    db,
    `PRAGMA foreign_keys = OFF;
     INSERT INTO role_candidates (role_key_wire, agent_id, source, updated_at_ms) VALUES ('rk2.orphan', 'nobody', 'grant', 1);
     ALTER TABLE agents ADD COLUMN nickname TEXT;
     DROP INDEX idx_agents_lease;
     PRAGMA writable_schema = ON;
     UPDATE sqlite_master SET sql = 'CREATE INDEX idx_messages_status ON messages(topic)' WHERE name = 'idx_messages_status';`,
  );
  const r = await cli(['check', db, '--json']);
  assert.equal(r.status, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  const kinds = out.findings.map((f) => `${f.check}/${f.kind} ${f.name ?? ''}`.trim());
  assert.ok(kinds.includes('schema/extra_column agents.nickname'), kinds.join('\n'));
  assert.ok(kinds.includes('schema/missing_index idx_agents_lease'), kinds.join('\n'));
  assert.ok(kinds.includes('schema/index_differs idx_messages_status'), kinds.join('\n'));
  assert.ok(kinds.some((k) => k.startsWith('foreign_keys/foreign_key_violation role_candidates#')), kinds.join('\n'));
  assert.ok(kinds.some((k) => k.startsWith('integrity/')), kinds.join('\n'));
  assert.ok(out.findings.find((f) => f.check === 'integrity').detail.includes('idx_messages_status'));
  const human = await cli(['check', db]);
  assert.equal(human.status, 1);
  assert.match(human.stdout, /^foreign_key_check +1 violation$/m);
  assert.match(human.stdout, /^ {2}schema: index idx_messages_status is ON messages\(topic\), expected ON messages\(status\)$/m);
});

// --- checkpoint ---

test('checkpoint: frames before and after; a reader blocks TRUNCATE (exit 1); without it the WAL is emptied', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const writer = startWriter(t, db, { total: 0, perTx: 1, pauseMs: 5 });
  await writer.ready;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const release = await holdReadTransaction(t, db);
  await new Promise((resolve) => setTimeout(resolve, 300)); // the writer adds frames past the reader's snapshot
  const blocked = await cli(['checkpoint', db, '--truncate', '--json', '--busy-timeout', '200']);
  assert.equal(blocked.status, 1, blocked.stderr);
  const b = JSON.parse(blocked.stdout);
  assert.equal(b.blocked, true);
  assert.equal(b.mode, 'truncate');
  assert.ok(b.frames_before > 0);
  assert.equal(b.frames_after, b.frames_before - b.frames_checkpointed);
  const passive = JSON.parse((await cli(['checkpoint', db, '--json'])).stdout);
  assert.equal(passive.blocked, passive.frames_checkpointed < passive.frames_before);
  assert.ok(passive.frames_after > 0, 'the reader pins frames a passive checkpoint cannot copy');
  const humanBlocked = await cli(['checkpoint', db, '--truncate', '--busy-timeout', '100']);
  assert.equal(humanBlocked.status, 1);
  assert.match(humanBlocked.stdout, /^blocked +yes/m);
  await release();
  await writer.pause(); // connection still open, so the WAL file stays
  // The paused hub's background checkpointer finishes its last round (it restarts an idle
  // WAL, truncating it to journal_size_limit); after that the WAL stays as it is.
  let walBefore = statSync(`${db}-wal`).size;
  for (let settled = 0; settled < 3; ) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const now = statSync(`${db}-wal`).size;
    settled = now === walBefore ? settled + 1 : 0;
    walBefore = now;
  }
  const done = await cli(['checkpoint', db, '--truncate', '--json']);
  assert.equal(done.status, 0, done.stdout + done.stderr);
  const d = JSON.parse(done.stdout);
  assert.deepEqual([d.blocked, d.frames_after, d.wal_size_before, d.wal_size_after], [false, 0, walBefore, 0]);
  assert.ok(walBefore > 0);
  const human = await cli(['checkpoint', db]);
  assert.equal(human.status, 0);
  assert.match(human.stdout, /^blocked +no$/m);
  assert.match(human.stdout, /^frames before +\d+/m);
  await writer.stop();
});

test('checkpoint on a rollback-journal file reports nothing to do', async (t) => {
  const db = fixtureCopy(t, 'hub-v5.db');
  const before = sha256(db);
  const r = await cli(['checkpoint', db]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /journal mode is delete, not wal: nothing to checkpoint/);
  assert.equal(JSON.parse((await cli(['checkpoint', db, '--json'])).stdout).wal, false);
  assert.equal(sha256(db), before);
});

test('check: a page damaged in the middle of the file is findings (exit 1), with and without --quick', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  await startWriter(t, db, { total: 3000, perTx: 1000, pauseMs: 0 }).done;
  const { pageSize, pageCount } = readOnly(db, (d) => ({
    pageSize: d.pragma('page_size', { simple: true }),
    pageCount: d.pragma('page_count', { simple: true }),
  }));
  assert.ok(pageCount > 200, `${pageCount} pages`);
  // Eight bytes flipped at the start of a page in the middle: its b-tree page header.
  const fd = openSync(db, 'r+');
  const at = Math.floor(pageCount / 2) * pageSize;
  const header = Buffer.alloc(8);
  readSync(fd, header, 0, 8, at);
  writeSync(fd, header.map((b) => b ^ 0xff), 0, 8, at);
  closeSync(fd);
  const damaged = sha256(db);
  for (const extra of [[], ['--quick']]) {
    const r = await cli(['check', db, '--json', ...extra]);
    assert.equal(r.status, 1, `check ${extra.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    const out = JSON.parse(r.stdout);
    assert.equal(out.clean, false);
    assert.ok(out.findings.some((f) => f.check === 'integrity'), JSON.stringify(out.findings));
    const human = await cli(['check', db, ...extra]);
    assert.equal(human.status, 1, human.stderr);
    assert.match(human.stdout, /\nNOT CLEAN: \d+ findings?\n$/);
  }
  assert.equal(sha256(db), damaged, 'check never changes the file');
});

test('check: a damaged first page is findings too; a file that is not SQLite at all stays bad input (exit 2)', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  // The SQLite header's magic kept, the rest of page 1 (header fields, sqlite_master root) overwritten.
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(1024, 0xa5), 0, 1024, 16);
  closeSync(fd);
  const r = await cli(['check', db, '--json']);
  assert.equal(r.status, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.clean, false);
  assert.ok(out.findings.some((f) => f.kind === 'sqlite_error'), JSON.stringify(out.findings));
  const text = join(tempDir(t), 'notes.db');
  writeFileSync(text, 'not a database\n'.repeat(100));
  assertOneLineError(await cli(['check', text]), /not a SQLite database$/, 'a text file');
});

/** A WAL that no checkpoint has touched: a writer with automatic checkpoints off, killed. */
function walOfKilledWriter(dbPath, transactions) {
  const script = `const { Database } = require(${JSON.stringify(join(repoRoot, 'index.cjs'))});
const db = new Database(process.argv[1]);
db.pragma('wal_autocheckpoint = 0');
const insert = db.prepare("INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, payload_json, status) VALUES (?, 'event', 'w', 'r', 't', 5, 1000, 1, 2, 'c', 't', ?, 'queued')");
for (let b = 0; b < Number(process.argv[2]); b++) db.transaction(() => { for (let i = 0; i < 20; i++) insert.run(b + '-' + i, 'x'.repeat(500)); })();
process.kill(process.pid, 'SIGKILL');`;
  const r = spawnSync(process.execPath, ['-e', script, dbPath, String(transactions)]);
  // Windows has no signals: the process is terminated as abruptly, with exit code 1.
  if (process.platform === 'win32') assert.equal(r.status, 1, String(r.stderr));
  else assert.equal(r.signal, 'SIGKILL', String(r.stderr));
}

test('checkpoint --truncate reports the frames it copied, read before TRUNCATE resets them', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  walOfKilledWriter(db, 40);
  const walBytes = statSync(`${db}-wal`).size;
  const { pageSize, messages } = readOnly(db, (d) => ({
    pageSize: d.pragma('page_size', { simple: true }),
    messages: d.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
  }));
  // A WAL written once from its start: a 32-byte header, then frames of a 24-byte header and a page.
  const frames = (walBytes - 32) / (pageSize + 24);
  assert.ok(Number.isInteger(frames) && frames > 40, `${frames} frames`);
  const r = await cli(['checkpoint', db, '--truncate', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(
    [out.frames_before, out.frames_checkpointed, out.frames_after, out.wal_size_before, out.wal_size_after, out.blocked],
    [frames, frames, 0, walBytes, 0, false],
  );
  assert.equal(readOnly(db, (d) => d.prepare('SELECT COUNT(*) FROM messages').pluck().get()), messages, 'every committed row is in the file');

  const again = fixtureCopy(t, 'hub-v6.db');
  walOfKilledWriter(again, 40);
  const human = await cli(['checkpoint', again, '--truncate']);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^frames before +${frames.toLocaleString('en-US')}$`, 'm'));
  assert.match(human.stdout, new RegExp(`^checkpointed +${frames.toLocaleString('en-US')}$`, 'm'));
});
