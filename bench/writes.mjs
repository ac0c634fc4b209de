#!/usr/bin/env node
// Sustained hub writes: this package's store against the original's statements on
// better-sqlite3 (bench/baseline.mjs), on a fresh file each, in one run.
//
// The mix is the hub's steady write load: auditLog, and a refreshLease every tenth call.
// For each rate (0 = as fast as the store goes) and repetition, each side runs in a child
// process of its own (the sides alternate): per-call p50 / p99 / p99.9 / max, bytes written
// per message (everything the process passed to write/pwrite, from /proc/self/io, WAL
// frames and checkpoints alike, up to a final PASSIVE checkpoint that copies what is left)
// and the WAL's peak size. Then each side runs once more under `strace -f` to count
// fsync/fdatasync during the calls: on the calling (event-loop) thread and on all threads.
// --readers adds a second process that holds read snapshots in turn (two connections,
// each holding one for --hold ms, overlapping by half), as an operator CLI or a bridge does.
//
//   node bench/writes.mjs [--messages 10000] [--rates 0,2000] [--reps 3] [--readers] [--hold 40]
//   node bench/writes.mjs --procs 4 --seconds 30 [--side addon|baseline|both] [--json]
//
// --procs: that many processes (each a store of the side) write, read and compare-and-set
// one role on one file for --seconds; printed: the WAL's peak (sampled every 10 ms),
// errors, and lost writes (every acknowledged auditLog id is looked up afterwards), with
// the file's integrity_check.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = dirname(fileURLToPath(import.meta.url));
const SELF = fileURLToPath(import.meta.url);

function parse(argv) {
  const o = { messages: 10_000, rates: [0, 2000], reps: 3, readers: false, hold: 40, side: 'both', procs: 0, seconds: 30 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--messages') o.messages = Number(next());
    else if (a === '--rates') o.rates = next().split(',').map(Number);
    else if (a === '--rate') o.rate = Number(next());
    else if (a === '--reps') o.reps = Number(next());
    else if (a === '--readers') o.readers = true;
    else if (a === '--hold') o.hold = Number(next());
    else if (a === '--side') o.side = next();
    else if (a === '--procs') o.procs = Number(next());
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--child') o.child = next();
    else if (a === '--file') o.file = next();
    else if (a === '--marks') o.marks = next();
    else if (a === '--index') o.index = Number(next());
    else if (a === '--no-strace') o.noStrace = true;
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const walSize = (file) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
const written = () => Number(/wchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
/** A stat of a file that does not exist: a line strace shows, to cut its trace at. */
const mark = (marks, name) => {
  if (marks) statSync(`${marks}-${name}`, { throwIfNoEntry: false });
};

async function openSide(side, file) {
  if (side === 'baseline') return (await import('./baseline.mjs')).createBaselineStore(file);
  return (await import('../index.mjs')).createStore(file);
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread until `until` (performance.now() ms), as an idle event loop would. */
function waitUntil(until) {
  for (;;) {
    const left = until - performance.now();
    if (left <= 0) return;
    if (left > 0.2) Atomics.wait(sleeper, 0, 0, left - 0.1);
  }
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ---------------------------------------------------------------- children

/** One side's sustained writes: prints "open", waits for "go", prints its result as JSON. */
async function writerChild(o) {
  const store = await openSide(o.side, o.file);
  store.registerAgent({ agent_id: 'agent-1', cli: 'codex', capabilities: ['x'], topics: ['t1'] });
  process.stdout.write('open\n');
  await new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once('line', () => {
      lines.close();
      process.stdin.destroy(); // an open stdin would keep this process alive at the end
      resolve();
    });
  });
  const lat = new Float64Array(o.messages);
  const interval = o.rate > 0 ? 1000 / o.rate : 0;
  let peak = walSize(o.file);
  mark(o.marks, 'start');
  const bytes0 = written();
  const t0 = performance.now();
  for (let i = 0; i < o.messages; i++) {
    if (interval) waitUntil(t0 + i * interval);
    const a = performance.now();
    if (i % 10 === 9) store.refreshLease('agent-1', 30_000);
    else store.auditLog({ type: 'event', from: 'agent-1', to: `agent-${i % 50}`, topic: 't1', payload: { i, note: 'sustained writes' } });
    lat[i] = performance.now() - a;
    if (i % 25 === 0) peak = Math.max(peak, walSize(o.file));
  }
  const elapsed = performance.now() - t0;
  mark(o.marks, 'end');
  const bytesCalls = written() - bytes0;
  peak = Math.max(peak, walSize(o.file));
  store.db.pragma('wal_checkpoint(PASSIVE)');
  const bytesAll = written() - bytes0;
  let status = null;
  if (o.side === 'addon') {
    const { checkpointStatus } = await import('../index.mjs');
    status = checkpointStatus(store);
    peak = Math.max(peak, status.walPeakBytes);
  }
  store.close();
  const sorted = Array.from(lat).sort((x, y) => x - y);
  process.stdout.write(
    `${JSON.stringify({
      p50: quantile(sorted, 0.5) * 1000,
      p99: quantile(sorted, 0.99) * 1000,
      p999: quantile(sorted, 0.999) * 1000,
      max: sorted.at(-1) * 1000,
      perSecond: (o.messages / elapsed) * 1000,
      bytesPerMessage: bytesAll / o.messages,
      bytesDuringCalls: bytesCalls / o.messages,
      walPeak: peak,
      status,
    })}\n`,
  );
}

/** Holds read snapshots in turn on two connections until stdin closes. */
async function readerChild(o) {
  const { loadReference } = await import('../tools/reference.mjs');
  const Database = loadReference();
  const conns = [new Database(o.file, { timeout: 5000 }), new Database(o.file, { timeout: 5000 })];
  const open = [false, false];
  let turn = 0;
  const begin = (k) => {
    conns[k].exec('BEGIN');
    conns[k].prepare('SELECT COUNT(*) FROM agents').pluck().get();
    open[k] = true;
  };
  begin(0);
  const timer = setInterval(() => {
    // The next snapshot starts before the previous one ends: the WAL is never free of readers.
    turn = 1 - turn;
    if (open[turn]) conns[turn].exec('COMMIT');
    begin(turn);
  }, o.hold / 2);
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => {
    clearInterval(timer);
    conns.forEach((c, k) => open[k] && c.exec('COMMIT'));
    conns.forEach((c) => c.close());
    process.exit(0);
  });
}

/** One of --procs hub processes: writes, reads and compare-and-set on one role. */
async function hubChild(o) {
  const store = await openSide(o.side, o.file);
  const WIRE = 'rk2.' + Buffer.from(`{"project_id":"prj_${'W'.repeat(22)}","role_kind":"cto"}`).toString('base64url');
  const me = `agent-${o.index}`;
  store.registerAgent({ agent_id: me, cli: 'codex', capabilities: [], topics: ['t1'] });
  if (!store.getRole(WIRE)) {
    try {
      store.upsertRoleReservation({ role_key_wire: WIRE });
    } catch {}
  }
  const ids = [];
  const out = { acks: 0, errors: 0, firstError: null, cas: { ok: 0, stale: 0 }, reads: 0 };
  const until = performance.now() + o.seconds * 1000;
  for (let i = 0; performance.now() < until; i++) {
    let call = 'refreshLease';
    try {
      if (i % 10 === 9) store.refreshLease(me, 30_000);
      else if ((call = 'getAuditMessagesForAgent') && i % 5 === 2) {
        store.getAuditMessagesForAgent(me, { max_messages: 20 });
        out.reads += 1;
      } else if ((call = 'compareAndSetRole') && i % 20 === 13) {
        const role = store.getRole(WIRE);
        const r = store.compareAndSetRole({
          role_key_wire: WIRE,
          expected_version: role.version,
          expected_epoch: role.epoch,
          expected_activation_seq: role.activation_seq,
          expected_activation_id: role.activation_id,
          patch: { holder_agent_id: me, state: 'active', last_reason: `cas-${me}-${i}` },
        });
        if (r.ok) out.cas.ok += 1;
        else out.cas.stale += 1;
      } else {
        call = 'auditLog';
        const m = store.auditLog({ type: 'event', from: me, to: `agent-${i % 4}`, topic: 't1', payload: { i } });
        ids.push(m.id);
        out.acks += 1;
      }
    } catch (error) {
      out.errors += 1;
      out.firstError ??= `${call}: ${error.code ?? error.name}: ${error.message}`;
    }
  }
  store.close();
  writeFileSync(`${o.file}.ids-${o.index}`, ids.join('\n'));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// ---------------------------------------------------------------- parent

function runChild(args, { readers, hold, strace } = {}) {
  return new Promise((resolve, reject) => {
    const file = args[args.indexOf('--file') + 1];
    const node = [process.execPath, SELF, ...args];
    const cmd = strace ? ['strace', '-f', '-qq', '-e', 'trace=fsync,fdatasync,newfstatat,statx,stat', '-o', strace, ...node] : node;
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    let reader = null;
    const lines = createInterface({ input: child.stdout });
    lines.on('line', async (line) => {
      if (line === 'open') {
        if (readers) {
          reader = spawn(process.execPath, [SELF, '--child', 'reader', '--file', file, '--hold', String(hold)], { stdio: ['pipe', 'pipe', 'inherit'] });
          await new Promise((r) => createInterface({ input: reader.stdout }).once('line', r));
        }
        child.stdin.write('go\n');
        return;
      }
      try {
        resolve(JSON.parse(line));
      } catch (error) {
        reject(error);
      }
      reader?.stdin.end();
    });
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${code}`));
    });
  });
}

/** fsync/fdatasync between the marks: on the thread that made the marks, and on all. */
function countSyncs(traceFile, marks) {
  const lines = readFileSync(traceFile, 'utf8').split('\n');
  let inside = false;
  let mainTid = null;
  const counts = { main: 0, all: 0 };
  for (const line of lines) {
    if (line.includes(`${marks}-start`)) {
      inside = true;
      mainTid = line.split(/\s+/)[0];
      continue;
    }
    if (line.includes(`${marks}-end`)) break;
    if (inside && /\b(fsync|fdatasync)\(/.test(line) && !line.includes('resumed>')) {
      counts.all += 1;
      if (line.split(/\s+/)[0] === mainTid) counts.main += 1;
    }
  }
  return counts;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function table(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  ')).join('\n');
}

async function sustained(o) {
  const sides = o.side === 'both' ? ['baseline', 'addon'] : [o.side];
  const haveStrace = !o.noStrace && spawnSync('strace', ['-V']).status === 0;
  console.log(
    `bench/writes.mjs: Node ${process.versions.node}, ${o.messages.toLocaleString('en')} calls (auditLog, refreshLease every tenth), ${o.reps} repetitions${o.readers ? `, a second process holding read snapshots in turn (${o.hold} ms each)` : ''}`,
  );
  for (const rate of o.rates) {
    const runs = Object.fromEntries(sides.map((s) => [s, []]));
    const syncs = {};
    for (let rep = 0; rep < o.reps; rep++) {
      const order = rep % 2 ? [...sides].reverse() : sides;
      for (const side of order) {
        const dir = mkdtempSync(join(tmpdir(), 'triflux-writes-'));
        try {
          const file = join(dir, 'hub.db');
          runs[side].push(await runChild(['--child', 'writer', '--side', side, '--file', file, '--messages', String(o.messages), '--rate', String(rate)], o));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    if (haveStrace) {
      for (const side of sides) {
        const dir = mkdtempSync(join(tmpdir(), 'triflux-writes-'));
        try {
          const file = join(dir, 'hub.db');
          const marks = join(dir, 'mark');
          const trace = join(dir, 'strace.txt');
          await runChild(['--child', 'writer', '--side', side, '--file', file, '--messages', String(o.messages), '--rate', String(rate), '--marks', marks], { ...o, strace: trace });
          syncs[side] = countSyncs(trace, marks);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    const med = (side, key) => median(runs[side].map((r) => r[key]));
    const us = (x) => x.toFixed(0);
    const rows = [['side', 'calls/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'KiB/message', 'WAL peak', 'fsyncs: calling thread', 'all threads']];
    for (const side of sides) {
      rows.push([
        side === 'addon' ? 'this package' : 'original (better-sqlite3)',
        us(med(side, 'perSecond')),
        us(med(side, 'p50')),
        us(med(side, 'p99')),
        us(med(side, 'p999')),
        us(med(side, 'max')),
        (med(side, 'bytesPerMessage') / 1024).toFixed(1),
        `${(Math.max(...runs[side].map((r) => r.walPeak)) / 2 ** 20).toFixed(1)} MiB`,
        syncs[side] ? syncs[side].main : 'n/a',
        syncs[side] ? syncs[side].all : 'n/a',
      ]);
    }
    if (sides.length === 2) {
      const ratio = (key) => (med('addon', key) / med('baseline', key)).toFixed(2);
      rows.push(['ratio (package/original)', ratio('perSecond'), ratio('p50'), ratio('p99'), ratio('p999'), ratio('max'), ratio('bytesPerMessage'), '', '', '']);
    }
    console.log(`\nrate: ${rate ? `${rate} calls/s` : 'full speed'} (medians of ${o.reps})`);
    console.log(table(rows));
    const status = runs.addon?.at(-1)?.status;
    if (status) {
      console.log(`checkpointer (last run): ${status.checkpoints} checkpoints, ${status.restarts} WAL restarts, ${status.busy} busy, ${status.failures} failures`);
    }
    if (sides.length === 2) {
      console.log(`summary: rate ${rate || 'full'}: bytes/message ${(med('addon', 'bytesPerMessage') / med('baseline', 'bytesPerMessage')).toFixed(2)}, p99.9 ${(med('addon', 'p999') / med('baseline', 'p999')).toFixed(2)}, calling-thread fsyncs ${syncs.addon?.main ?? 'n/a'} vs ${syncs.baseline?.main ?? 'n/a'}`);
    }
  }
}

async function procs(o) {
  const sides = o.side === 'both' ? ['baseline', 'addon'] : [o.side];
  const { loadReference } = await import('../tools/reference.mjs');
  const Database = loadReference();
  const rows = [['side', 'processes', 'seconds', 'WAL peak', 'acknowledged writes', 'lost', 'errors', 'CAS ok / stale', 'integrity']];
  const results = [];
  for (const side of sides) {
    const dir = mkdtempSync(join(tmpdir(), 'triflux-procs-'));
    try {
      const file = join(dir, 'hub.db');
      // The file is made by the side's store first, so that every process opens it as is.
      (await openSide(side, file)).close();
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, walSize(file))), 10);
      const outcomes = await Promise.all(
        Array.from({ length: o.procs }, (_, k) =>
          new Promise((resolve, reject) => {
            const child = spawn(process.execPath, [SELF, '--child', 'hub', '--side', side, '--file', file, '--seconds', String(o.seconds), '--index', String(k)], { stdio: ['ignore', 'pipe', 'inherit'] });
            createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line)));
            child.on('exit', (code) => code !== 0 && reject(new Error(`process ${k} exited with ${code}`)));
          }),
        ),
      );
      clearInterval(sampler);
      peak = Math.max(peak, walSize(file));
      const db = new Database(file, { readonly: true });
      const present = new Set(db.prepare('SELECT id FROM messages').pluck().all());
      const integrity = db.pragma('integrity_check', { simple: true });
      db.close();
      let acks = 0;
      let lost = 0;
      for (let k = 0; k < o.procs; k++) {
        const ids = readFileSync(`${file}.ids-${k}`, 'utf8').split('\n').filter(Boolean);
        acks += ids.length;
        lost += ids.filter((id) => !present.has(id)).length;
      }
      const errors = outcomes.reduce((n, r) => n + r.errors, 0);
      results.push({ side, procs: o.procs, seconds: o.seconds, walPeak: peak, acks, lost, errors, firstError: outcomes.find((r) => r.firstError)?.firstError ?? null, integrity });
      rows.push([
        side === 'addon' ? 'this package' : 'original (better-sqlite3)',
        o.procs,
        o.seconds,
        `${(peak / 2 ** 20).toFixed(1)} MiB`,
        acks,
        lost,
        errors ? `${errors} (${outcomes.find((r) => r.firstError)?.firstError})` : 0,
        `${outcomes.reduce((n, r) => n + r.cas.ok, 0)} / ${outcomes.reduce((n, r) => n + r.cas.stale, 0)}`,
        integrity,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (o.json) {
    console.log(JSON.stringify(results));
    return;
  }
  console.log(`bench/writes.mjs --procs: Node ${process.versions.node}, each process: auditLog, a refreshLease every tenth call, reads, compare-and-set on one role`);
  console.log(table(rows));
}

const o = parse(process.argv.slice(2));
if (o.child === 'writer') await writerChild(o);
else if (o.child === 'reader') await readerChild(o);
else if (o.child === 'hub') await hubChild(o);
else if (o.procs > 0) await procs(o);
else await sustained(o);
