#!/usr/bin/env node
// Statement memory: what hub/store-adapter.mjs does — `db.prepare(sql)` on every call —
// repeated N times (default 1,000,000) with an `await` every 100 calls, on this package's
// `store.db` and on better-sqlite3; prints the RSS along the way. Each side runs in its own
// child process on its own file.
//
//   node bench/memory.mjs                       # both sides, 1,000,000 calls, `await null`
//   node bench/memory.mjs --calls 200000 --yield immediate --side addon
//
// `--yield microtask` (default) awaits a resolved value, so the event loop never turns
// inside the loop (no FinalizationRegistry callback, no setImmediate); `--yield immediate`
// awaits a setImmediate, which lets them run.
//
//   node bench/memory.mjs --large               # large values: peak RSS of each read
//
// `--large` reads large values from one file written beforehand, each read in a fresh
// process per side: all() and iterate() of 1,100 rows of 500,000 characters (550 MB),
// all() and iterate() of 100 BLOBs of 4 MiB, and all() of one 90-million-character TEXT;
// it prints each side's peak RSS (the process's maxRSS) and their ratio.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadReference } from '../tools/reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SQL = 'SELECT value FROM _meta WHERE key = ?';

function args(argv) {
  const o = { calls: 1_000_000, yield: 'microtask', side: 'both', distinct: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--calls') o.calls = Number(argv[++i]);
    else if (a === '--yield') o.yield = argv[++i];
    else if (a === '--side') o.side = argv[++i];
    else if (a === '--child') o.child = argv[++i];
    else if (a === '--file') o.file = argv[++i];
    else if (a === '--large') o.large = true;
    else if (a === '--read') o.read = argv[++i];
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const mib = (b) => b / 2 ** 20;

async function child(o) {
  let db;
  let close;
  if (o.child === 'baseline') {
    const Database = loadReference();
    db = new Database(o.file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT)');
    close = () => db.close();
  } else {
    const { createStore } = await import('../index.mjs');
    const store = createStore(o.file);
    db = store.db;
    close = () => store.close();
  }
  db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)').run('k', 'v');
  const marks = new Set([0, 100_000, 250_000, 500_000, 750_000, o.calls]);
  const samples = [];
  let peak = 0;
  const pause = o.yield === 'immediate' ? () => new Promise((r) => setImmediate(r)) : () => null;
  const t0 = performance.now();
  for (let i = 0; i <= o.calls; i++) {
    if (marks.has(i)) samples.push([i, mib(process.memoryUsage.rss())]);
    if (i === o.calls) break;
    if (db.prepare(SQL).pluck().get('k') !== 'v') throw new Error('wrong value');
    if (i % 100 === 99) {
      await pause();
      if (i % 10_000 === 9_999) peak = Math.max(peak, process.memoryUsage.rss());
    }
  }
  const ms = performance.now() - t0;
  peak = Math.max(peak, process.memoryUsage.rss());
  close();
  process.stdout.write(JSON.stringify({ samples, peak: mib(peak), usPerCall: (ms * 1000) / o.calls }));
}

/** The large-value reads, by name: what each does on a better-sqlite3-shaped `db`. */
const LARGE_READS = {
  'all() of 1,100 TEXT rows of 500,000 characters': (db) => db.prepare('SELECT s FROM texts').all().length,
  'iterate() of the same rows': (db) => {
    let n = 0;
    for (const row of db.prepare('SELECT s FROM texts').iterate()) n += row.s.length > 0 ? 1 : 0;
    return n;
  },
  'all() of 100 BLOBs of 4 MiB': (db) => db.prepare('SELECT b FROM blobs').all().length,
  'iterate() of the same BLOBs': (db) => {
    let n = 0;
    for (const row of db.prepare('SELECT b FROM blobs').iterate()) n += row.b.length > 0 ? 1 : 0;
    return n;
  },
  'all() of one 90-million-character TEXT': (db) => db.prepare('SELECT s FROM huge').all().length,
};

/** Writes the large values' file (with better-sqlite3). */
function writeLarge(file) {
  const Database = loadReference();
  const db = new Database(file);
  db.exec('CREATE TABLE texts (s TEXT); CREATE TABLE blobs (b BLOB); CREATE TABLE huge (s TEXT)');
  const text = db.prepare('INSERT INTO texts VALUES (?)');
  const blob = db.prepare('INSERT INTO blobs VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 1100; i++) text.run(String.fromCharCode(65 + (i % 26)).repeat(500_000));
    for (let i = 0; i < 100; i++) blob.run(Buffer.alloc(4 * 2 ** 20, i));
    db.prepare('INSERT INTO huge VALUES (?)').run('x'.repeat(90_000_000));
  })();
  db.close();
}

/** The child of `--large`: one read on one side; prints its result and peak RSS. */
async function largeChild(o) {
  const Database = o.child === 'baseline' ? loadReference() : (await import('../better-sqlite3.mjs')).default;
  const db = new Database(o.file, { readonly: true });
  const result = LARGE_READS[o.read](db);
  db.close();
  process.stdout.write(JSON.stringify({ result, peak: process.resourceUsage().maxRSS / 1024 }));
}

function large() {
  const dir = mkdtempSync(join(tmpdir(), 'triflux-memory-large-'));
  try {
    const file = join(dir, 'large.db');
    writeLarge(file);
    console.log('large values: peak RSS of a fresh process doing one read, each side');
    console.log('| read | this package | better-sqlite3 | ratio |');
    console.log('|---|---:|---:|---:|');
    for (const read of Object.keys(LARGE_READS)) {
      const peak = {};
      for (const side of ['baseline', 'addon']) {
        const text = execFileSync(process.execPath, [join(here, 'memory.mjs'), '--large', '--child', side, '--file', file, '--read', read],
          { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 });
        peak[side] = JSON.parse(text);
      }
      if (peak.addon.result !== peak.baseline.result) throw new Error(`${read}: ${peak.addon.result} here, ${peak.baseline.result} from better-sqlite3`);
      console.log(`| ${read} | ${peak.addon.peak.toFixed(0)} MiB | ${peak.baseline.peak.toFixed(0)} MiB | ${(peak.addon.peak / peak.baseline.peak).toFixed(2)} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const o = args(process.argv.slice(2));
  if (o.large && o.child) return largeChild(o);
  if (o.large) return large();
  if (o.child) return child(o);
  const dir = mkdtempSync(join(tmpdir(), 'triflux-memory-'));
  const sides = o.side === 'both' ? ['baseline', 'addon'] : [o.side];
  const out = {};
  try {
    for (const side of sides) {
      const text = execFileSync(
        process.execPath,
        [join(here, 'memory.mjs'), '--child', side, '--file', join(dir, `${side}.db`), '--calls', String(o.calls), '--yield', o.yield],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      out[side] = JSON.parse(text);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cols = out[sides[0]].samples.map(([i]) => i);
  const head = ['side', ...cols.map((i) => `RSS @${i.toLocaleString('en')}`), 'peak', 'µs/call'];
  const rows = [head];
  for (const side of sides) {
    rows.push([side, ...out[side].samples.map(([, m]) => `${m.toFixed(0)} MiB`), `${out[side].peak.toFixed(0)} MiB`, out[side].usPerCall.toFixed(2)]);
  }
  const w = head.map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  console.log(`${o.calls.toLocaleString('en')} × db.prepare(sql).pluck().get(key), await (${o.yield}) every 100 calls`);
  for (const r of rows) console.log(r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  '));
  if (out.addon && out.baseline) console.log(`peak ratio addon/baseline: ${(out.addon.peak / out.baseline.peak).toFixed(2)}`);
}

await main();
