#!/usr/bin/env node
// WAL growth and recovery: a writer makes `--writes` auditLog calls (default 200,000) while a
// second process holds a read transaction open for the first `--hold` of them (default
// 20,000); then the reader ends and the writer goes on. Printed: the -wal file size when the
// reader lets go (the pinned peak), at the end of the 200k, and after `--after` more writes
// (default 5,000). Both sides: this package (createStore) and better-sqlite3 running the
// original auditLog with the original PRAGMAs (bench/baseline.mjs). The log starts with
// `--prefill` messages (default 20,000, written in one transaction, then the store is
// reopened), so this package runs with its large-log indexes.
//
//   node bench/wal.mjs
//   node bench/wal.mjs --writes 50000 --hold 10000 --side addon
//
// The reader is always this package's own `Database`, in its own process (a second process
// is what pins a WAL in a hub). Disk use while pinned: about 40 KB per write.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function args(argv) {
  const o = { writes: 200_000, hold: 20_000, after: 5_000, prefill: 20_000, side: 'both' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--writes') o.writes = Number(argv[++i]);
    else if (a === '--hold') o.hold = Number(argv[++i]);
    else if (a === '--after') o.after = Number(argv[++i]);
    else if (a === '--prefill') o.prefill = Number(argv[++i]);
    else if (a === '--side') o.side = argv[++i];
    else if (a === '--writer') o.writer = argv[++i];
    else if (a === '--reader') o.reader = true;
    else if (a === '--file') o.file = argv[++i];
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const walSize = (file) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
const mib = (b) => (b / 2 ** 20).toFixed(1);

/** The reader: opens a read transaction, says "ready", holds it until stdin closes. */
async function reader(o) {
  const { Database } = await import('../index.mjs');
  const db = new Database(o.file);
  db.exec('BEGIN');
  db.prepare('SELECT COUNT(*) FROM messages').pluck().get();
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => {
    db.exec('COMMIT');
    db.close();
    process.exit(0);
  });
}

async function writer(o) {
  const open =
    o.writer === 'baseline'
      ? (await import('./baseline.mjs')).createBaselineStore
      : (await import('../index.mjs')).createStore;
  let store = open(o.file);
  const log = (i) =>
    store.auditLog({ type: 'event', from: 'agent-1', to: `agent-${i % 50}`, topic: 't1', payload: { i, note: 'wal bench' } });
  // A log that is already large (this package then runs with its large-log indexes).
  if (o.prefill > 0) {
    store.db.transaction(() => {
      for (let i = 0; i < o.prefill; i++) log(i);
    })();
    store.close();
    store = open(o.file);
  }
  log(0);
  const rd = spawn(process.execPath, [join(here, 'wal.mjs'), '--reader', '--file', o.file], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    rd.stdout.once('data', resolve);
    rd.once('exit', () => reject(new Error('reader exited early')));
  });
  const out = {};
  const t0 = performance.now();
  for (let i = 1; i <= o.writes; i++) {
    log(i);
    if (i === o.hold) {
      out.pinned = walSize(o.file);
      const gone = new Promise((resolve) => rd.once('exit', resolve));
      rd.stdin.end();
      await gone;
    }
  }
  out.end = walSize(o.file);
  for (let i = 0; i < o.after; i++) log(i);
  out.after = walSize(o.file);
  out.usPerWrite = ((performance.now() - t0) * 1000) / (o.writes + o.after);
  store.close();
  out.closed = walSize(o.file);
  process.stdout.write(JSON.stringify(out));
}

async function main() {
  const o = args(process.argv.slice(2));
  if (o.reader) return reader(o);
  if (o.writer) return writer(o);
  const sides = o.side === 'both' ? ['baseline', 'addon'] : [o.side];
  const rows = [['side', `WAL after ${o.hold.toLocaleString('en')} pinned writes`, `after ${o.writes.toLocaleString('en')} writes`, `after ${o.after.toLocaleString('en')} more`, 'after close', 'WAL KiB/write (pinned)', 'µs/write']];
  for (const side of sides) {
    const dir = mkdtempSync(join(tmpdir(), 'triflux-wal-'));
    try {
      const text = execFileSync(
        process.execPath,
        [join(here, 'wal.mjs'), '--writer', side, '--file', join(dir, 'hub.db'), '--writes', String(o.writes), '--hold', String(o.hold), '--after', String(o.after), '--prefill', String(o.prefill)],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const r = JSON.parse(text);
      rows.push([side, `${mib(r.pinned)} MiB`, `${mib(r.end)} MiB`, `${mib(r.after)} MiB`, `${mib(r.closed)} MiB`, (r.pinned / o.hold / 1024).toFixed(1), r.usPerWrite.toFixed(1)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const r of rows) console.log(r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  '));
}

await main();
