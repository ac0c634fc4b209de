// The triflux-store command, run as a user runs it: a child process on copies of the
// fixture databases and on files that another process (the hub-writer child) is writing.
// Every expectation is computed from the files themselves, never written in by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { createStore, Database } from '../index.mjs';
import { main } from '../lib/cli/main.mjs';
import { fixtureCopy, referenceSkip, repoRoot, secondConnection, tempDir } from './helpers.mjs';

const BIN = join(repoRoot, 'bin', 'triflux-store.mjs');
const WRITER = join(repoRoot, '__test__', 'fixtures', 'hub-writer.mjs');

/** Runs the command in a child process; resolves to { status, stdout, stderr }. */
function cli(args, { timeout = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`triflux-store ${args.join(' ')} timed out\n${stderr}`));
    }, timeout);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A child that prints "<prefix>..." lines; resolves when a line starting with `word` appears. */
function waitForLine(child, word) {
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
function startWriter(t, dbPath, { total = 0, perTx = 1, pauseMs = 20 } = {}) {
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
  };
}

/** A second connection in a child that holds a read transaction until released. */
async function holdReadTransaction(t, dbPath) {
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

/** Runs a multi-statement SQL script on a file with better-sqlite3 (else this package), in a child process. */
function execInChild(dbPath, sql) {
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

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Reads facts from a file with this package's read-only Database (the CLI runs in another process). */
function readOnly(path, fn) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function tableCounts(path) {
  return readOnly(path, (db) => {
    const out = {};
    for (const name of db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all()) {
      out[name] = db.prepare(`SELECT COUNT(*) FROM "${name}"`).pluck().get();
    }
    return out;
  });
}

/** Asserts the one-line error contract: non-zero exit, one stderr line, no stack, no stdout. */
function assertOneLineError(r, pattern, label) {
  assert.equal(r.status, 2, `${label}: exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', `${label}: nothing on stdout`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${label}: one line, got ${JSON.stringify(r.stderr)}`);
  assert.match(lines[0], /^triflux-store: /, label);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${label}: no stack trace`);
  assert.match(lines[0], pattern, label);
}

const SUBCOMMANDS = [['info'], ['stats'], ['agents'], ['roles'], ['tail', '--once'], ['check'], ['checkpoint'], ['backup', 'OUT']];

// --- info ---

test('info: versions, sizes, journal mode and row counts of each fixture', async (t) => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  for (const [name, journal] of [['hub-v6.db', 'wal'], ['hub-v5.db', 'delete'], ['hub-v4.db', 'wal']]) {
    const db = fixtureCopy(t, name);
    const before = sha256(db);
    const expected = readOnly(db, (d) => ({
      version: Number(d.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get()),
      sqlite: d.prepare('SELECT sqlite_version()').pluck().get(),
      pageSize: d.pragma('page_size', { simple: true }),
      pageCount: d.pragma('page_count', { simple: true }),
    }));
    const counts = tableCounts(db);
    const json = await cli(['info', db, '--json']);
    assert.equal(json.status, 0, json.stderr);
    const info = JSON.parse(json.stdout);
    assert.equal(info.schema_version, expected.version, name);
    assert.equal(info.store_schema_version, 6);
    assert.equal(info.sqlite_version, expected.sqlite);
    assert.deepEqual(info.package, { name: pkg.name, version: pkg.version });
    assert.equal(info.journal_mode, journal, name);
    assert.equal(info.page_size, expected.pageSize);
    assert.equal(info.page_count, expected.pageCount);
    assert.equal(info.file_size, statSync(db).size);
    assert.deepEqual(info.tables, counts, name);

    const human = await cli(['info', db]);
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^schema version +${expected.version}\\b`, 'm'));
    assert.match(human.stdout, new RegExp(`^journal mode +${journal}$`, 'm'));
    assert.match(human.stdout, new RegExp(`^sqlite +${expected.sqlite.replace(/\./g, '\\.')}$`, 'm'));
    for (const [table, n] of Object.entries(counts)) assert.match(human.stdout, new RegExp(`^${table} +${n}$`, 'm'), table);
    assert.equal(sha256(db), before, `${name}: info never changes the file`);
  }
});

// --- stats ---

test("stats: the store's four statistics, equal to what createStore returns on a copy", async (t) => {
  for (const name of ['hub-v6.db', 'hub-v4.db']) {
    const db = fixtureCopy(t, name);
    const before = sha256(db);
    const r = await cli(['stats', db, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout);
    // The reference: the store itself, opened (and so migrated) on a second copy.
    const other = fixtureCopy(t, name);
    const originalWarn = console.warn;
    console.warn = () => {};
    const store = createStore(other);
    console.warn = originalWarn;
    try {
      assert.deepEqual(got.hub, store.getHubStats(), name);
      assert.deepEqual(got.audit, store.getAuditStats(), name);
      assert.deepEqual(got.queue_depths, store.getQueueDepths(), name);
      assert.deepEqual(got.delivery, store.getDeliveryStats(), name);
    } finally {
      store.close();
    }
    const human = await cli(['stats', db]);
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`total_messages +${got.hub.total_messages}$`, 'm'));
    assert.match(human.stdout, new RegExp(`urgent +${got.queue_depths.urgent}$`, 'm'));
    assert.equal(sha256(db), before, `${name}: stats never changes (or migrates) the file`);
  }
});

test('stats on a schema-5 file names the missing table', async (t) => {
  const db = fixtureCopy(t, 'hub-v5.db');
  assertOneLineError(await cli(['stats', db]), /schema version 5 has no .*assign_jobs/, 'stats v5');
});

// --- agents and roles ---

test('agents: status and lease left of every agent, at a given clock', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const rows = readOnly(db, (d) => d.prepare('SELECT agent_id, status, lease_expires_ms FROM agents').all());
  const now = rows[0].lease_expires_ms - 10000;
  const r = await cli(['agents', db, '--json', '--now', String(now)]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.now_ms, now);
  assert.deepEqual(
    out.agents.map((a) => [a.agent_id, a.status, a.lease_left_ms, a.lease_expired]),
    rows.map((a) => [a.agent_id, a.status, a.lease_expires_ms - now, a.lease_expires_ms <= now]),
  );
  const human = await cli(['agents', db, '--now', String(now)]);
  assert.equal(human.status, 0, human.stderr);
  const lines = human.stdout.split('\n');
  assert.match(lines[0], /^agent +cli +pid +status +lease left +last seen +topics$/);
  const first = lines.find((l) => l.startsWith(`${rows[0].agent_id} `));
  assert.match(first, new RegExp(` ${rows[0].status} +10s `));
  assert.equal(lines.filter((l) => rows.some((a) => l.startsWith(`${a.agent_id} `))).length, rows.length);
  const expired = await cli(['agents', db, '--now', String(rows[0].lease_expires_ms + 3_600_000)]);
  assert.match(expired.stdout, /expired 1h ago/);
});

test('roles: decoded keys, holder, state, epoch, version, lease left; expired holders as the store lists them', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const registry = readOnly(db, (d) => d.prepare('SELECT * FROM role_registry ORDER BY role_key_wire').all());
  const leases = registry.map((r) => r.holder_lease_expires_ms).filter((v) => v != null).sort((a, b) => a - b);
  // A clock between the earliest and the latest holder lease: some holders expired, some not.
  const now = leases[0] + 1;
  const other = fixtureCopy(t, 'hub-v6.db');
  const store = createStore(other);
  const expiredByStore = store.listRolesWithExpiredHolder(now).map((r) => r.role_key_wire);
  store.close();
  assert.ok(expiredByStore.length > 0 && expiredByStore.length < registry.filter((r) => r.holder_agent_id).length);

  const r = await cli(['roles', db, '--json', '--now', String(now)]);
  assert.equal(r.status, 0, r.stderr);
  const { roles } = JSON.parse(r.stdout);
  assert.deepEqual(roles.map((x) => x.role_key_wire), registry.map((x) => x.role_key_wire));
  for (const [i, role] of roles.entries()) {
    const row = registry[i];
    assert.deepEqual(role.role_key, {
      project_id: row.project_id,
      role_kind: row.role_kind,
      scope_id: row.scope_id === '' ? null : row.scope_id,
    });
    assert.equal(role.role_key_problem, null);
    for (const k of ['state', 'holder_agent_id', 'epoch', 'version']) assert.equal(role[k], row[k], k);
    assert.equal(role.lease_left_ms, row.holder_lease_expires_ms == null ? null : row.holder_lease_expires_ms - now);
  }
  assert.deepEqual(roles.filter((x) => x.holder_expired).map((x) => x.role_key_wire), expiredByStore);

  const human = await cli(['roles', db, '--now', String(now)]);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout.split('\n')[0], /^project +kind +scope +state +holder +epoch +version +lease left +cand +flags$/);
  assert.equal(human.stdout.split('\n').filter((l) => l.includes('HOLDER EXPIRED')).length, expiredByStore.length);
  for (const row of registry) assert.match(human.stdout, new RegExp(`^${row.project_id} +${row.role_kind} .* ${row.state} `, 'm'));
});

test('roles flags a wire that does not decode or disagrees with its columns', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const [first, second] = readOnly(db, (d) => d.prepare('SELECT role_key_wire FROM role_registry ORDER BY role_key_wire').pluck().all());
  await execInChild(
    db,
    `PRAGMA foreign_keys=OFF;
     UPDATE role_registry SET role_key_wire = 'rk2.@@not-base64' WHERE role_key_wire = '${first}';
     UPDATE role_registry SET project_id = 'prj_SomethingElse000000000' WHERE role_key_wire = '${second}';`,
  );
  const r = await cli(['roles', db, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const problems = JSON.parse(r.stdout).roles.map((x) => [x.role_key_wire, x.role_key_problem]).filter(([, p]) => p);
  assert.deepEqual(problems.sort(), [
    ['rk2.@@not-base64', 'wire does not decode'],
    [second, 'wire differs from the row columns'],
  ].sort());
});

// --- tail ---

test('tail --once: the last messages in order, filtered by agent, topic and type', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const all = readOnly(db, (d) => d.prepare('SELECT * FROM messages ORDER BY rowid').all());
  const r = await cli(['tail', db, '--once', '--json', '-n', '100']);
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows, all);
  const last3 = await cli(['tail', db, '--once', '--json', '-n', '3']);
  assert.deepEqual(last3.stdout.trim().split('\n').map((l) => JSON.parse(l).id), all.slice(-3).map((m) => m.id));

  const agent = all[0].to_agent;
  const type = all[0].type;
  const topic = all[all.length - 1].topic;
  for (const [args, keep] of [
    [['--agent', agent], (m) => m.from_agent === agent || m.to_agent === agent],
    [['--type', type], (m) => m.type === type],
    [['--topic', topic, '--type', type], (m) => m.topic === topic && m.type === type],
  ]) {
    const f = await cli(['tail', db, '--once', '--json', '-n', '100', ...args]);
    assert.equal(f.status, 0, f.stderr);
    const ids = f.stdout.trim() === '' ? [] : f.stdout.trim().split('\n').map((l) => JSON.parse(l).id);
    assert.deepEqual(ids, all.filter(keep).map((m) => m.id), args.join(' '));
  }
  const human = await cli(['tail', db, '--once', '-n', '2']);
  const lines = human.stdout.trim().split('\n');
  assert.equal(lines.length, 2);
  const m = all[all.length - 1];
  assert.ok(lines[1].startsWith(new Date(m.created_at_ms).toISOString()), lines[1]);
  assert.ok(lines[1].includes(`${m.from_agent} -> ${m.to_agent}`), lines[1]);
});

test('tail follows new messages written by another process (bounded by --limit)', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const tail = cli(['tail', db, '-n', '0', '--json', '--agent', 'writer', '--interval', '50', '--limit', '4', '--timeout', '30000']);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const writer = startWriter(t, db, { total: 10, perTx: 1, pauseMs: 30 });
  const r = await tail;
  await writer.done;
  assert.equal(r.status, 0, r.stderr);
  const got = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const written = readOnly(db, (d) => d.prepare("SELECT id FROM messages WHERE from_agent = 'writer' ORDER BY rowid").pluck().all());
  assert.equal(written.length, 10);
  assert.deepEqual(got.map((m) => m.id), written.slice(0, 4));
});

test('tail holds no read transaction between polls: a TRUNCATE checkpoint completes while it follows', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const writer = startWriter(t, db, { total: 0, perTx: 1, pauseMs: 40 });
  await writer.ready;
  const tail = cli(['tail', db, '-n', '1', '--interval', '20', '--timeout', '4000']);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const results = [];
  for (let i = 0; i < 3; i++) {
    const r = await cli(['checkpoint', db, '--truncate', '--json', '--busy-timeout', '3000']);
    results.push([r.status, JSON.parse(r.stdout).blocked]);
  }
  const tailed = await tail;
  const count = await writer.stop();
  assert.equal(tailed.status, 0, tailed.stderr);
  assert.ok(count > 0);
  assert.ok(tailed.stdout.split('\n').filter((l) => l.includes('writer -> reader')).length > 1, 'tail saw the writes');
  assert.deepEqual(results, [[0, false], [0, false], [0, false]]);
});

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
  const walBefore = statSync(`${db}-wal`).size;
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

// --- bad input ---

test('bad input: missing file, not a database, empty file, newer schema: one line, exit 2, file unchanged', async (t) => {
  const dir = tempDir(t);
  const notDb = join(dir, 'notes.txt');
  writeFileSync(notDb, 'these are not the pages you are looking for\n'.repeat(200));
  const empty = join(dir, 'empty.db');
  writeFileSync(empty, '');
  const newer = fixtureCopy(t, 'hub-v6.db');
  await execInChild(newer, "UPDATE _meta SET value = '7' WHERE key = 'schema_version'");
  const noMeta = join(dir, 'plain.db');
  await execInChild(noMeta, 'CREATE TABLE t (x); INSERT INTO t VALUES (1);');
  const cases = [
    [join(dir, 'missing.db'), /missing\.db: no such file$/],
    [notDb, /notes\.txt: not a SQLite database$/],
    [empty, /empty\.db: empty file, not a SQLite database$/],
    [newer, /schema version 7 is newer than this triflux-store understands \(6\)/],
    [noMeta, /not a triflux hub database \(no _meta table\)$/],
    [dir, /not a regular file$/],
  ];
  for (const [path, pattern] of cases) {
    const before = existsSync(path) && statSync(path).isFile() ? sha256(path) : null;
    for (const sub of SUBCOMMANDS) {
      const args = sub.map((a) => (a === 'OUT' ? join(dir, `out-${Math.random().toString(36).slice(2)}.db`) : a));
      const r = await cli([sub[0], path, ...args.slice(1)]);
      assertOneLineError(r, pattern, `${sub[0]} ${path}`);
      if (sub[0] === 'backup') assert.ok(!existsSync(args[1]), 'no copy is left behind');
    }
    if (before !== null) assert.equal(sha256(path), before, `${path} unchanged`);
    assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0, 'nothing was written to a WAL');
  }
});

test('usage errors: unknown command or option, missing argument, bad number', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  assertOneLineError(await cli(['frobnicate', db]), /unknown command "frobnicate"/, 'unknown command');
  assertOneLineError(await cli(['info', db, '--bogus']), /info: Unknown option '--bogus'/, 'unknown option');
  assertOneLineError(await cli(['info']), /info: missing <db>/, 'missing db');
  assertOneLineError(await cli(['backup', db]), /backup: missing <out>/, 'missing out');
  assertOneLineError(await cli(['info', db, 'extra']), /unexpected argument "extra"/, 'extra argument');
  assertOneLineError(await cli(['tail', db, '--lines', 'many']), /--lines expects an integer/, 'bad number');
  const help = await cli(['--help']);
  assert.equal(help.status, 0);
  for (const [sub] of SUBCOMMANDS) assert.match(help.stdout, new RegExp(`^ {2}${sub} <db>`, 'm'), sub);
  const none = await cli([]);
  assert.equal(none.status, 2);
  const version = await cli(['--version']);
  assert.equal(version.stdout.trim(), `triflux-native-store ${JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version}`);
});

test('a reader that closes the pipe early (| head) ends the command quietly', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  await startWriter(t, db, { total: 3000, perTx: 1000, pauseMs: 0 }).done;
  const child = spawn(process.execPath, [BIN, 'tail', db, '--once', '-n', '3000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  child.stdout.once('data', () => child.stdout.destroy());
  const status = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(status, 0);
});

test('a copied fixture stays byte-identical through every read-only subcommand', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  const before = sha256(db);
  for (const sub of [['info'], ['stats'], ['agents'], ['roles'], ['tail', '--once'], ['check'], ['backup', join(tempDir(t), 'b.db')]]) {
    const r = await cli([sub[0], db, ...sub.slice(1), '--json']);
    assert.equal(r.status, 0, `${sub[0]}: ${r.stderr}`);
    JSON.parse(sub[0] === 'tail' ? r.stdout.trim().split('\n')[0] : r.stdout);
  }
  assert.equal(sha256(db), before);
});
