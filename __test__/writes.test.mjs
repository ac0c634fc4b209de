// The store's writes never wait for a checkpoint or a sync: the background checkpointer
// (src/engine/checkpointer/, docs/writes.md) does them, keeps the WAL under its bound
// while other processes read, loses nothing when killed or when the disk is full, and
// leaves what store.db shows (wal_autocheckpoint, explicit checkpoints) as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { createStore, checkpointStatus, Database } from '../index.mjs';
import { repoRoot, tempDir } from './helpers.mjs';

const BOUND = 64 * 1024 * 1024;
const walSize = (path) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
const log = (store, i) => store.auditLog({ type: 'event', from: 'a', to: `agent-${i % 9}`, topic: 't', payload: { i, note: 'writes test' } });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another process holding read snapshots on `path` in turn, each for `hold` ms (wal-reader.mjs), once its first is open. */
async function startReader(t, path, hold) {
  const reader = spawn(process.execPath, [join(repoRoot, '__test__', 'fixtures', 'wal-reader.mjs'), path, String(hold)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => reader.exitCode === null && reader.kill());
  await new Promise((resolve) => createInterface({ input: reader.stdout }).once('line', resolve));
  return reader;
}

async function until(what, check, ms = 5000) {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

test('store.db reads and sets wal_autocheckpoint as the original did; 0 turns the background checkpoints off', async (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  const db = store.db;
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  assert.deepEqual(db.pragma('wal_autocheckpoint'), [{ wal_autocheckpoint: 1000 }]);
  assert.deepEqual(db.prepare('PRAGMA main.wal_autocheckpoint').get(), { wal_autocheckpoint: 1000 });
  assert.deepEqual(db.pragma('wal_autocheckpoint = 500'), [{ wal_autocheckpoint: 500 }]);
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 500);
  assert.equal(checkpointStatus(store).autocheckpoint, 500);

  db.exec('PRAGMA wal_autocheckpoint = 0');
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
  await sleep(300); // whatever the open left to do
  const off = checkpointStatus(store).checkpoints;
  for (let i = 0; i < 400; i++) log(store, i);
  await sleep(300);
  assert.equal(checkpointStatus(store).checkpoints, off, 'no checkpoint while wal_autocheckpoint is 0');
  assert.ok(walSize(path) > 1024 * 1024, 'the WAL grows, as in SQLite');

  db.pragma('wal_autocheckpoint = 1000');
  for (let i = 0; i < 100; i++) log(store, i);
  await until('a background checkpoint', () => checkpointStatus(store).checkpoints > off);
  // Another connection to the file has SQLite's own setting.
  const other = new Database(path);
  assert.equal(other.pragma('wal_autocheckpoint', { simple: true }), 1000);
  other.close();
  assert.equal(checkpointStatus(store).failures, 0);
  assert.equal(checkpointStatus(store).running, true);
});

test("an explicit wal_checkpoint through store.db completes while the checkpointer works; a Database has none", (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 600; i++) log(store, i);
    assert.deepEqual(store.db.pragma('wal_checkpoint(TRUNCATE)'), [{ busy: 0, log: 0, checkpointed: 0 }]);
    assert.equal(walSize(path), 0);
  }
  assert.equal(store.getHubStats().total_messages, 3000);
  const db = new Database(join(tempDir(t), 'plain.db'));
  db.pragma('journal_mode = WAL');
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  db.close();
  assert.equal(checkpointStatus(createStore(':memory:')), null, 'an in-memory store has no WAL');
});

const strace = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;

/**
 * Runs `script` (which stats `dir/mark-start` and `dir/mark-end` around its writes) under
 * `strace -f`, asserts that no fsync or fdatasync between the marks ran on the thread
 * that made them, and returns the process's result and every such sync.
 */
function syncsBetweenMarks(dir, script) {
  const trace = join(dir, 'trace.txt');
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync,statx,newfstatat,stat', '-o', trace, process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(trace, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.includes('mark-start'));
  const end = lines.findIndex((l) => l.includes('mark-end'));
  assert.ok(start >= 0 && end > start, 'both marks traced');
  const main = lines[start].split(/\s+/)[0];
  const syncs = lines.slice(start, end).filter((l) => /\b(fsync|fdatasync)\(/.test(l) && !l.includes('resumed>'));
  assert.deepEqual(syncs.filter((l) => l.split(/\s+/)[0] === main), [], 'no sync on the calling thread');
  return { r, syncs };
}
test('sustained writes: no fsync or fdatasync on the calling thread, the checkpointer syncs instead', { skip: !strace && 'needs strace (Linux)' }, (t) => {
  const dir = tempDir(t);
  const script = `
    import { statSync } from 'node:fs';
    import { createStore } from ${JSON.stringify(join(repoRoot, 'index.mjs'))};
    const store = createStore(${JSON.stringify(join(dir, 'hub.db'))});
    const mark = (name) => statSync(${JSON.stringify(join(dir, 'mark-'))} + name, { throwIfNoEntry: false });
    mark('start');
    for (let i = 0; i < 4000; i++) {
      if (i % 10 === 9) store.refreshLease('agent-1', 30000);
      else store.auditLog({ type: 'event', from: 'agent-1', to: 'agent-' + (i % 50), topic: 't1', payload: { i } });
    }
    mark('end');
    store.close();`;
  const { syncs } = syncsBetweenMarks(dir, script);
  assert.ok(syncs.length > 0, 'the checkpointer synced');
});

test('restarts while another process holds read snapshots in turn: still no sync on the calling thread', { skip: !strace && 'needs strace (Linux)' }, async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'hub.db');
  createStore(path).close();
  const reader = await startReader(t, path, 8);
  // A 1 MiB journal_size_limit restarts the WAL every ~75 writes: each restart waits for
  // the reader's snapshots and then commits the WAL's first frame, the moment in which a
  // write of the store's connection would restart the WAL itself. 2,000 writes a second,
  // so that writes arrive throughout every restart.
  const script = `
    import { statSync } from 'node:fs';
    import { createStore, checkpointStatus } from ${JSON.stringify(join(repoRoot, 'index.mjs'))};
    const store = createStore(${JSON.stringify(path)});
    store.db.pragma('journal_size_limit = 1048576');
    const mark = (name) => statSync(${JSON.stringify(join(dir, 'mark-'))} + name, { throwIfNoEntry: false });
    const pause = new Int32Array(new SharedArrayBuffer(4));
    mark('start');
    const t0 = performance.now();
    for (let i = 0; i < 6000; i++) {
      for (let left = t0 + i / 2 - performance.now(); left > 0; left = t0 + i / 2 - performance.now()) Atomics.wait(pause, 0, 0, left);
      if (i % 10 === 9) store.refreshLease('agent-1', 30000);
      else store.auditLog({ type: 'event', from: 'agent-1', to: 'agent-' + (i % 50), topic: 't1', payload: { i } });
    }
    mark('end');
    console.log(JSON.stringify(checkpointStatus(store)));
    store.close();`;
  let r;
  try {
    r = syncsBetweenMarks(dir, script).r;
  } finally {
    reader.stdin.end();
  }
  const status = JSON.parse(r.stdout);
  assert.ok(status.restarts >= 10, `restarts ${status.restarts}`);
  assert.equal(status.failures, 0);
});

test('the WAL stays under its bound while another process holds read snapshots in turn', async (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  log(store, 0);
  const reader = await startReader(t, path, 30);
  let peak = 0;
  // ~90 MiB of WAL frames, several times what the checkpointer lets the WAL hold, at a
  // busy hub's pace (3,000 writes a second).
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 1; i <= 7000; i++) {
    log(store, i);
    if (i % 25 === 0) peak = Math.max(peak, walSize(path));
    if (i % 3 === 0) Atomics.wait(pause, 0, 0, 1);
  }
  reader.stdin.end();
  const status = checkpointStatus(store);
  assert.ok(peak < BOUND, `WAL peak ${peak}`);
  assert.ok(status.walPeakBytes < BOUND, `checkpointer's peak ${status.walPeakBytes}`);
  assert.ok(status.restarts >= 2, `restarts ${status.restarts}`);
  assert.equal(status.failures, 0);
  assert.equal(store.getHubStats().total_messages, 7001);
});

test("restarts complete while another process's snapshots overlap: they wait for the snapshots, not for a lock the readers keep taking in turn", async (t) => {
  const path = join(tempDir(t), 'hub.db');
  const store = createStore(path);
  t.after(() => store.close());
  log(store, 0);
  const reader = await startReader(t, path, 40);
  // ~90 MiB of WAL at 2,000 writes a second: several restarts, each against open snapshots.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const t0 = performance.now();
  for (let i = 1; i <= 7000; i++) {
    for (let left = t0 + i / 2 - performance.now(); left > 0; left = t0 + i / 2 - performance.now()) Atomics.wait(pause, 0, 0, left);
    log(store, i);
  }
  reader.stdin.end();
  const status = checkpointStatus(store);
  assert.ok(status.restarts >= 2, `restarts ${status.restarts}`);
  // A try the readers outlast counts as busy: the first, made before they are known, may
  // be; a RESTART starved of read lock 1 by their overlapping snapshots gave up every
  // other try or so, whatever its wait.
  assert.ok(status.busy <= status.restarts, `${status.busy} busy tries for ${status.restarts} restarts`);
  assert.equal(status.failures, 0);
});

/** Runs the writer fixture; resolves with the acknowledged ids and its other lines. */
function writer(t, path, mode, { killAfter, command } = {}) {
  const args = [join(repoRoot, '__test__', 'fixtures', 'wal-writer.mjs'), path, mode];
  const child = command ? spawn(command[0], [...command.slice(1), ...args]) : spawn(process.execPath, args);
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  const acked = [];
  const other = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('ack ')) {
      acked.push(line.slice(4));
      if (killAfter && acked.length === killAfter) child.kill('SIGKILL');
    } else other.push(line);
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ acked, other, code, signal, stderr })));
}

function verify(path, acked) {
  const db = new Database(path);
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const present = new Set(db.prepare('SELECT id FROM messages').pluck().all());
    assert.deepEqual(acked.filter((id) => !present.has(id)), [], 'every acknowledged write is in the file');
    const torn = db.prepare('SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM message_inbox i WHERE i.message_id = m.id)').pluck().get();
    assert.equal(torn, 0, 'no message without the inbox row of its transaction');
    return present.size;
  } finally {
    db.close();
  }
}

test('kill -9 while the checkpointer is busy: every acknowledged write is there, no torn transaction, integrity ok', async (t) => {
  const path = join(tempDir(t), 'hub.db');
  let acked = [];
  for (const killAfter of [2500, 1300, 3700]) {
    const run = await writer(t, path, 'kill', { killAfter });
    assert.equal(run.signal, 'SIGKILL', run.stderr);
    acked = acked.concat(run.acked);
    assert.ok(verify(path, acked) >= acked.length);
  }
});

const ulimit = process.platform === 'linux' && spawnSync('bash', ['-c', 'ulimit -f 1']).status === 0;
test('a full disk during checkpoints: they fail, the operator sees it, nothing acknowledged is lost', { skip: !ulimit && 'needs bash and ulimit -f (Linux)' }, async (t) => {
  const path = join(tempDir(t), 'hub.db');
  // The process may not write past 12 MiB in any file, and SIGXFSZ is ignored: writes beyond
  // fail with EFBIG, as on a full disk.
  const limit = 12 * 1024 * 1024;
  const command = ['bash', '-c', `trap '' XFSZ; ulimit -f ${limit / 1024}; exec "${process.execPath}" "$@"`, 'bash'];
  // The database file starts just under the limit, so that the first checkpoint that grows
  // it fails, long before the WAL (restarted every 1 MiB until then) could reach the limit:
  // however slow the machine, the checkpoints fail first and the writes after them.
  const setup = createStore(path);
  setup.db.exec('CREATE TABLE ballast (b BLOB)');
  setup.db.prepare('INSERT INTO ballast VALUES (zeroblob(?))').run(limit - 256 * 1024 - statSync(path).size);
  setup.db.pragma('wal_checkpoint(TRUNCATE)');
  setup.close();
  const size = statSync(path).size;
  assert.ok(size > limit - 1024 * 1024 && size < limit - 64 * 1024, `database file of ${size} bytes`);
  const run = await writer(t, path, 'full', { command });
  assert.equal(run.code, 0, run.stderr);
  const status = JSON.parse(run.other.find((l) => l.startsWith('status ')).slice(7));
  assert.ok(status.failures >= 1, `checkpoint failures: ${JSON.stringify(status)}`);
  assert.match(status.lastError, /disk|I\/O|SQLite code/);
  assert.match(run.stderr, /\[triflux-native-store\] checkpoint of .* failed: .*nothing is lost/);
  assert.ok(run.acked.length > 500, `${run.acked.length} writes before the disk was full`);
  verify(path, run.acked);
  // With room again, the store goes on and its checkpointer catches up.
  const store = createStore(path);
  t.after(() => store.close());
  log(store, 1);
  // Its first round copies the WAL the full disk left (an explicit checkpoint waits for
  // the round, up to 5 s, which a loaded machine may need).
  await until('the first checkpoint after the disk had room again', () => checkpointStatus(store).checkpoints > 0, 30_000);
  assert.equal(store.db.pragma('wal_checkpoint(TRUNCATE)')[0].busy, 0);
  assert.equal(store.getHubStats().total_messages, run.acked.length + 1);
});
