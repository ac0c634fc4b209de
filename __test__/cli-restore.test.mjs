// The way back to the original store: `triflux-store restore-schema`, and a converted
// file on which an original store re-created its indexes. The reference is better-sqlite3
// running the original store's statements (fixtures/original-tick-child.mjs) on a file the
// original created and this package never opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';

import { createStore } from '../index.mjs';
import { cli, execInChild, readOnly, sha256, startWriter, tableCounts } from './cli-helpers.mjs';
import { fixtureCopy, referenceSkip, tempDir } from './helpers.mjs';
import { runOriginal, SCHEMA_SQL, tickCalls, tieRows } from './fixtures/tie-log.mjs';

const INDEXES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql IS NOT NULL ORDER BY rowid";
const indexes = (path) => readOnly(path, (d) => d.prepare(INDEXES).all());
const converted = (path) => indexes(path).some((ix) => ix.name === 'idx_messages_to_agent_recent');

/** A file the original store created with a large log (12,000 messages, big tie groups), and the time its rows are relative to. */
function originalFile(dir) {
  const now = Date.now();
  const path = join(dir, 'never-converted.db');
  runOriginal({ db: path, schemaSql: SCHEMA_SQL, rows: tieRows(now, 12_000) });
  return { path, now };
}

/** A copy of `path` converted by this package's store (it converts at open, the log being large). */
function convertedCopy(path, to) {
  copyFileSync(path, to);
  createStore(to).close();
  assert.ok(converted(to), 'the store converted the copy');
  return to;
}

/** The original's results with getDeadLetters' sweep clock (failed_at_ms) masked: it differs between runs. */
function originalResults(path, calls, now) {
  return runOriginal({ db: path, calls }).map((r, i) =>
    calls[i][0] === 'getDeadLetters' ? r.map((d) => ({ ...d, failed_at_ms: d.failed_at_ms >= now ? 'swept' : d.failed_at_ms })) : r,
  );
}

test('restore-schema: on the restored file the original store answers exactly as on a never-converted one', { skip: referenceSkip }, async (t) => {
  const dir = tempDir(t);
  const { path: never, now } = originalFile(dir);
  const file = convertedCopy(never, join(dir, 'restored.db'));
  const calls = tickCalls(now);
  const reads = calls.filter(([method]) => method === 'getAuditMessagesForAgent' || method === 'pollForAgent');
  // What the command is for: on the converted file the original's reads differ (ties, LIMIT).
  const reference = originalResults(never, reads, now);
  const onConverted = originalResults(file, reads, now);
  const differing = reads.filter((_, i) => JSON.stringify(onConverted[i]) !== JSON.stringify(reference[i])).length;
  assert.ok(differing > 0, `the converted file gives the original other answers (${differing} of ${reads.length} reads)`);
  const rows = tableCounts(file);

  const r = await cli(['restore-schema', file, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.changed, true);
  assert.deepEqual(out.dropped.sort(), ['idx_messages_role_pending', 'idx_messages_status_time', 'idx_messages_to_agent_recent', 'idx_messages_topic_recent']);
  // The schema is the never-converted file's: names, SQL and order of the indexes on messages.
  assert.deepEqual(indexes(file), indexes(never));
  assert.deepEqual(tableCounts(file), rows, 'no row changed');
  const restored = originalResults(file, calls, now);
  const expected = originalResults(never, calls, now);
  for (let i = 0; i < calls.length; i++) {
    assert.equal(JSON.stringify(restored[i]), JSON.stringify(expected[i]), `call ${i}: ${JSON.stringify(calls[i])}`);
  }
  const check = await cli(['check', file]);
  assert.equal(check.status, 0, check.stdout);
  const again = await cli(['restore-schema', file]);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /has the original store's indexes on messages already; nothing to do/);
});

test("a converted file on which an original re-applied schema.sql: this package's next open drops the original indexes again; restore-schema on it gives the original's indexes", { skip: referenceSkip }, async (t) => {
  const dir = tempDir(t);
  const { path: never } = originalFile(dir);
  const ours = indexes(convertedCopy(never, join(dir, 'ours.db')));
  const both = convertedCopy(never, join(dir, 'both.db'));
  // The original re-applies schema.sql (CREATE INDEX IF NOT EXISTS) after a version mismatch.
  await execInChild(both, SCHEMA_SQL);
  const reapplied = indexes(both);
  assert.equal(reapplied.length, ours.length + indexes(never).length - 2, 'both sets (correlation and trace are in both)');
  const other = join(dir, 'restore-both.db');
  copyFileSync(both, other);

  createStore(both).close();
  assert.deepEqual(indexes(both), ours, 'the large-log set alone, as after the first conversion');
  const check = await cli(['check', both, '--json']);
  assert.equal(check.status, 0, check.stdout);
  assert.deepEqual(JSON.parse(check.stdout).notes, [], 'no index left over');

  const r = await cli(['restore-schema', other]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(indexes(other), indexes(never));
});

test('restore-schema refuses while a hub has the file open (exit 1, nothing changed); after a killed hub it keeps every committed row', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  // A hub whose log grew past the threshold: its store converted the file while it ran.
  await startWriter(t, db, { total: 10_500, perTx: 1_500, pauseMs: 0 }).done;
  assert.ok(converted(db));
  const writer = startWriter(t, db, { total: 0, perTx: 5, pauseMs: 2 });
  await writer.ready;
  await writer.pause();
  // The paused hub's background checkpointer copies its last commits into the file once
  // it has been idle for a moment; after that the file stays as it is.
  let before = sha256(db);
  for (let settled = 0; settled < 3; ) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const now = sha256(db);
    settled = now === before ? settled + 1 : 0;
    before = now;
  }
  const busy = await cli(['restore-schema', db, '--busy-timeout', '200']);
  assert.equal(busy.status, 1, busy.stdout + busy.stderr);
  assert.match(busy.stderr, /^triflux-store: .*: another connection has the file open \(a running hub\?\): stop it and run restore-schema again; nothing was changed\n$/);
  assert.equal(sha256(db), before);
  assert.ok(converted(db));

  await writer.kill();
  const rows = tableCounts(db);
  const r = await cli(['restore-schema', db]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!converted(db));
  assert.deepEqual(tableCounts(db), rows, "the killed hub's -wal transactions are all in the file");
});
