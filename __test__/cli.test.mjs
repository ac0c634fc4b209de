// The triflux-store command, run as a user runs it: a child process on copies of the
// fixture databases and on files that another process (the hub-writer child) is writing.
// Every expectation is computed from the files themselves, never written in by hand.
// (check and checkpoint: cli-check.test.mjs; backup: cli-backup.test.mjs; read-only
// places: cli-readonly.test.mjs; restore-schema: cli-restore.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createStore } from '../index.mjs';
import { COMMANDS, COMMON } from '../lib/cli/commands.mjs';
import { assertOneLineError, BIN, cli, execInChild, readOnly, sha256, startWriter, tableCounts } from './cli-helpers.mjs';
import { fixtureCopy, repoRoot, tempDir } from './helpers.mjs';

const SUBCOMMANDS = [['info'], ['stats'], ['agents'], ['roles'], ['tail', '--once'], ['check'], ['checkpoint'], ['backup', 'OUT'], ['restore-schema']];

// --- info ---

test('info: versions, sizes, journal mode and row counts of each fixture', async (t) => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const entries = { 6: 'triflux-native-store', 7: 'triflux-native-store/v7', 8: 'triflux-native-store/v8' };
  for (const [name, journal] of [['hub-v8.db', 'wal'], ['hub-v7.db', 'wal'], ['hub-v6.db', 'wal'], ['hub-v5.db', 'delete'], ['hub-v4.db', 'wal']]) {
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
    // The store of the file's release; an older file's is the oldest store (it migrates it).
    const store = Math.max(6, expected.version);
    assert.equal(info.store_schema_version, store, name);
    assert.equal(info.store_entry, entries[store], name);
    assert.equal(info.sqlite_version, expected.sqlite);
    assert.deepEqual(info.package, { name: pkg.name, version: pkg.version });
    assert.equal(info.journal_mode, journal, name);
    assert.equal(info.page_size, expected.pageSize);
    assert.equal(info.page_count, expected.pageCount);
    assert.equal(info.file_size, statSync(db).size);
    assert.deepEqual(info.tables, counts, name);

    const human = await cli(['info', db]);
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^schema version +${expected.version} \\(${entries[store].replace('/', '\\/')}`, 'm'));
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

test('stats reads its four statistics in one read transaction while the hub writes', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  // A log large enough that counting it takes a while: a second snapshot would differ.
  await startWriter(t, db, { total: 20_000, perTx: 2_000, pauseMs: 0 }).done;
  const writer = startWriter(t, db, { total: 0, perTx: 20, pauseMs: 0 });
  await writer.ready;
  const totals = [];
  for (let i = 0; i < 5; i++) {
    const r = await cli(['stats', db, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const { hub, audit, queue_depths: depths } = JSON.parse(r.stdout);
    assert.deepEqual(
      [audit.total_messages, audit.dlq, audit.online_agents, depths.urgent, depths.normal, depths.dlq],
      [hub.total_messages, hub.dlq, hub.online_agents, hub.urgent, hub.normal, hub.dlq],
      `run ${i}: one state of the file`,
    );
    totals.push(hub.total_messages);
  }
  const written = await writer.stop();
  assert.ok(written > 0 && totals.at(-1) > totals[0], `the hub wrote while stats ran (${totals.join(', ')})`);
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

test('tail --timeout <ms> ends the follow after that time; --busy-timeout is the lock wait', async (t) => {
  const db = fixtureCopy(t, 'hub-v6.db');
  for (const extra of [[], ['--busy-timeout', '20000']]) {
    const r = await cli(['tail', db, '-n', '0', '--timeout', '700', '--interval', '50', ...extra]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '');
    // Node's start-up is in the measured time too; the busy timeout (5 s by default) is not.
    assert.ok(r.ms >= 700 && r.ms < 3000, `exited after ${r.ms} ms (${extra.join(' ') || 'default busy timeout'})`);
  }
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

// --- bad input ---

test('bad input: missing file, not a database, empty file, newer schema: one line, exit 2, file unchanged', async (t) => {
  const dir = tempDir(t);
  const notDb = join(dir, 'notes.txt');
  writeFileSync(notDb, 'these are not the pages you are looking for\n'.repeat(200));
  const empty = join(dir, 'empty.db');
  writeFileSync(empty, '');
  const newer = fixtureCopy(t, 'hub-v6.db');
  await execInChild(newer, "UPDATE _meta SET value = '9' WHERE key = 'schema_version'");
  const noMeta = join(dir, 'plain.db');
  await execInChild(noMeta, 'CREATE TABLE t (x); INSERT INTO t VALUES (1);');
  const cases = [
    [join(dir, 'missing.db'), /missing\.db: no such file$/],
    [notDb, /notes\.txt: not a SQLite database$/],
    [empty, /empty\.db: empty file, not a SQLite database$/],
    [newer, /schema version 9 is newer than this triflux-store understands \(8\)/],
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

test('every subcommand has its own --help: its options, the common ones and an example', async () => {
  for (const [name, spec] of Object.entries(COMMANDS)) {
    const r = await cli([name, '--help']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `Usage: triflux-store ${name} ${spec.args.map((a) => `<${a}>`).join(' ')} [options]`);
    for (const [, flag] of [...Object.values(spec.options), ...Object.values(COMMON)]) {
      assert.ok(lines.some((l) => l.startsWith(`  ${flag} `)), `${name} --help lists ${flag}`);
    }
    const examples = lines.slice(lines.findIndex((l) => /^Examples?:$/.test(l)) + 1);
    assert.ok(examples.length > 0 && examples.every((l) => l === '' || l.startsWith(`  triflux-store ${name} `)), `${name}: examples`);
    assert.equal((await cli(['help', name])).stdout, r.stdout, `help ${name}`);
  }
  const backup = (await cli(['backup', '--help'])).stdout;
  for (const flag of ['--vacuum', '--force', '--step <pages>']) assert.match(backup, new RegExp(`^  ${flag} +\\S`, 'm'));
  assert.match(backup, /^ {2}triflux-store backup hub\.db hub-copy\.db$/m);
  assertOneLineError(await cli(['help', 'frobnicate']), /unknown command "frobnicate"/, 'help of an unknown command');
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
