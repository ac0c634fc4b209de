// Benchmark: the native store (../index.mjs, or with --schema 7 / 8 ../v7.mjs / ../v8.mjs)
// against bench/baseline.mjs, a store doing that schema version's original's statements, on better-sqlite3 built for the running Node and, where the Node
// has it (22.5+), on node:sqlite (bench/node-sqlite.mjs). Each method runs on its own fresh,
// file-backed WAL databases seeded with identical rows. The sides' runs alternate; the ratio
// reported is the median of the per-repetition ratios addon/baseline (lower is better).
// The floor is the same statements with the same values run from Rust alone
// (src/bench_floor/): what SQLite itself costs per call. Its recorder is in binaries built
// with `npm run build:bench` only (a release build has none: the floor column is empty).
//
//   node bench/run.mjs [--schema 6|7|8] [--reps N] [--only a,b] [--json out.json] [--ms N] [--wal-natural] [--aa] [--keep]

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { createBaselineStore } from './baseline.mjs';
import { CASES, SEEDS } from './cases.mjs';
import { nodeSqliteDatabase } from './node-sqlite.mjs';
import { median, medianInterval } from './stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(import.meta.url);
const native = require('../lib/native.cjs');
/** The original's statements on node:sqlite, where this Node has it. */
const NodeSqlite = nodeSqliteDatabase();

function nodeSqliteVersion() {
  const db = new NodeSqlite(':memory:');
  try {
    return db.prepare('SELECT sqlite_version() AS v').get().v;
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- options

function parseArgs(argv) {
  const opts = { schema: 6, reps: 7, only: null, json: null, ms: 300, wal: 'quiet', aa: false, keep: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, null];
    const value = () => {
      if (inline != null) return inline;
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--schema': opts.schema = Number(value()); break;
      case '--reps': opts.reps = Number(value()); break;
      case '--only': opts.only = value().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--json': opts.json = value(); break;
      case '--ms': opts.ms = Number(value()); break;
      case '--keep': opts.keep = true; break;
      case '--wal-natural': opts.wal = 'natural'; break;
      case '--aa': opts.aa = true; break;
      case '-h': case '--help': opts.help = true; break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (![6, 7, 8].includes(opts.schema)) throw new Error('--schema must be 6, 7 or 8');
  if (!Number.isInteger(opts.reps) || opts.reps < 5) throw new Error('--reps must be an integer >= 5');
  if (!(opts.ms > 0)) throw new Error('--ms must be a positive number');
  return opts;
}

// ---------------------------------------------------------------- helpers

/** The schema version both sides run (--schema); set once from the options. */
let schemaVersion = 6;
const baselineStore = (path, options = {}) => createBaselineStore(path, { schema: schemaVersion, ...options });
const ENTRIES = { 6: '../index.mjs', 7: '../v7.mjs', 8: '../v8.mjs' };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** Shape of a result (keys in order, value kinds), to check both sides did the same work. */
function shape(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.length}:${v.length ? shape(v[0]) : ''}]`;
  if (typeof v === 'object') return `{${Object.keys(v).map((k) => `${k}:${shape(v[k])}`).join(',')}}`;
  return typeof v;
}

function buildKind() {
  try {
    const node = readdirSync(root).find((f) => /^triflux-native-store\..*\.node$/.test(f));
    if (!node) return 'missing';
    const size = statSync(join(root, node)).size;
    const libs = (profile) => {
      const out = [];
      for (const dir of [join(root, 'target', profile), ...readdirSync(join(root, 'target')).map((t) => join(root, 'target', t, profile))]) {
        try {
          for (const f of readdirSync(dir)) {
            if (/^(lib)?triflux_native_store\.(so|dylib|dll)$/.test(f)) out.push(statSync(join(dir, f)).size);
          }
        } catch {}
      }
      return out;
    };
    if (libs('release').includes(size)) return 'release';
    if (libs('debug').includes(size)) return 'debug';
    return 'unknown';
  } catch {
    return 'unknown';
  }
}

/** SQLite version behind a store, through its `db` facade when it has one. */
function sqliteVersion(open) {
  let store = null;
  try {
    store = open();
    return store.db?.prepare('SELECT sqlite_version() AS v').get().v ?? 'unknown (no db facade)';
  } catch (e) {
    return `unknown (${String(e?.message ?? e).split('\n')[0]})`;
  } finally {
    try { store?.close(); } catch {}
  }
}

// ---------------------------------------------------------------- timing

const SLICES = 4; // minimum slices per repetition
const PROBE = 20; // calls used to measure WAL frames per call
const QUIET_FRAMES = 500; // WAL frames a timed slice may append (autocheckpoint is at 1000)
const STORE_TARGET = 0.8;
const FACADE_TARGET = 1.2;


function timeRun(fn, start, n) {
  const t0 = process.hrtime.bigint();
  for (let i = start; i < start + n; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1e3 / n; // µs per op
}

/** Runs a WAL checkpoint through a store's own `db` handle; returns the frames the WAL held. */
function checkpoint(store, mode = 'PASSIVE') {
  const r = store.db.prepare(`PRAGMA wal_checkpoint(${mode})`).get();
  if (!r || typeof r.log !== 'number') throw new Error('wal_checkpoint returned no frame count');
  return r.log;
}

/** WAL frames appended per call of a case, on a scratch baseline store. */
function walFramesPerCall(c, path) {
  prepareFile(path, c.seeds);
  const s = baselineStore(path);
  try {
    const op = c.op(s);
    for (let i = 0; i < PROBE; i++) op(i);
    checkpoint(s, 'TRUNCATE');
    for (let i = PROBE; i < 2 * PROBE; i++) op(i);
    return checkpoint(s) / PROBE; // TRUNCATE reports 0 frames, PASSIVE the count
  } finally {
    s.close();
  }
}

/**
 * Creates and seeds a database file BEFORE the store under test opens it. Seeding goes
 * through the baseline (better-sqlite3), which writes the same schema.sql; it must never
 * touch the addon's file while the addon has it open: the addon has its own SQLite copy,
 * and POSIX locks are per process, so a second library closing its descriptor would drop
 * the addon's locks.
 */
function prepareFile(path, seeds) {
  const s = baselineStore(path);
  try {
    s.db.transaction(() => {
      for (const name of seeds) SEEDS[name](s.db);
    })();
  } finally {
    s.close();
  }
}

/**
 * Brings a freshly opened file to the state the timed runs meet: every table's pages read
 * once, and a WAL that earlier writes grew and a checkpoint emptied (writing into it then
 * reuses the file's blocks instead of growing it).
 */
function warmUp(db) {
  for (const table of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()) {
    db.prepare(`SELECT * FROM "${table.replaceAll('"', '""')}"`).all();
  }
  const write = db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('bench.floor.warm', ?)");
  for (let i = 0; i < QUIET_FRAMES; i++) write.run(String(i));
  db.prepare("DELETE FROM _meta WHERE key = 'bench.floor.warm'").run();
  checkpoint({ db });
}

/**
 * The native connection handle behind a Database (`store.db`), through the symbol-keyed
 * property the package keeps it under: the floor's replay runs on it.
 */
function connectionHandle(db) {
  const key = Object.getOwnPropertySymbols(db).find((s) => s.description === 'native');
  return db[key].handle;
}

/** Whether the loaded binary has the floor's recorder (`npm run build:bench`). */
const hasFloor = () => typeof native.benchFloorRecord === 'function';

/**
 * The floor of a case: `calls` calls on a fresh file with the statements they run
 * recorded (src/bench_floor/), then the recording replayed from Rust on another fresh
 * file; the median over three replays, in µs per call. Null without the recorder.
 */
function floorOf(c, createStore, dir, calls) {
  if (!hasFloor()) return null;
  const recordPath = join(dir, `${c.name}.floor-record.db`);
  prepareFile(recordPath, c.seeds);
  const recorder = createStore(recordPath);
  const op = c.op(recorder);
  native.benchFloorRecord(true);
  try {
    for (let i = 0; i < calls; i++) op(i);
  } finally {
    native.benchFloorRecord(false);
    recorder.close();
  }
  const times = [];
  for (let r = 0; r < 3; r++) {
    const replayPath = join(dir, `${c.name}.floor-${r}.db`);
    prepareFile(replayPath, c.seeds);
    const replayer = createStore(replayPath);
    try {
      warmUp(replayer.db);
      times.push(native.benchFloorReplay(connectionHandle(replayer.db)) / 1e3 / calls);
    } finally {
      replayer.close();
    }
  }
  return median(times);
}

function runCase(c, createStore, dir, opts) {
  const target = c.target ?? (c.facade ? FACADE_TARGET : STORE_TARGET);
  const row = { method: c.name, area: c.area, target, addon_us: null, baseline_us: null, node_sqlite_us: null, floor_us: null, ratio: null, ratio_node_sqlite: null, status: '', n: 0, shape: null };
  const addonPath = join(dir, `${c.name}.addon.db`);
  const basePath = join(dir, `${c.name}.baseline.db`);
  const nodeSqlitePath = join(dir, `${c.name}.node-sqlite.db`);
  let addon = null;
  let base = null;
  let third = null;
  try {
    prepareFile(basePath, c.seeds);
    prepareFile(addonPath, c.seeds);
    addon = createStore(addonPath);
    base = baselineStore(basePath);
    if (NodeSqlite && !opts.aa) {
      prepareFile(nodeSqlitePath, c.seeds);
      third = baselineStore(nodeSqlitePath, { Database: NodeSqlite });
    }
    let thirdOp = third ? c.op(third) : null;
    const implemented = c.facade
      ? addon.db != null && typeof addon.db.prepare === 'function'
      : typeof addon[c.method ?? c.name] === 'function';
    // A method the addon lacks is still timed on the baseline: that checks the baseline
    // and gives the reference number; the row says "n/a (not implemented)".
    const baseOp = c.op(base);
    let addonOp = null;
    if (implemented) {
      try {
        addonOp = c.op(addon);
      } catch (e) {
        row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
        addonOp = null;
      }
    }

    // WAL frames one call appends, measured on a throwaway baseline file, so that no
    // checkpoint touches the measured files and both of their WALs stay in step.
    const framesPerCall = walFramesPerCall(c, join(dir, `${c.name}.probe.db`));
    row.wal_frames_per_call = framesPerCall;

    // Warm-up: the baseline for ~ms, then the addon for the same number of calls, so that
    // both sides have the same state and their last results are comparable.
    let w = 0;
    let baseLast;
    const wt0 = process.hrtime.bigint();
    while (w < 50 || (w < 100000 && Number(process.hrtime.bigint() - wt0) / 1e6 < opts.ms)) baseLast = baseOp(w++);
    const baseWarm = Number(process.hrtime.bigint() - wt0) / 1e3 / w;
    let thirdWarm = 0;
    if (thirdOp) {
      const tt0 = process.hrtime.bigint();
      let thirdLast;
      try {
        for (let i = 0; i < w; i++) thirdLast = thirdOp(i);
        thirdWarm = Number(process.hrtime.bigint() - tt0) / 1e3 / w;
        if (shape(thirdLast) !== shape(baseLast)) row.node_sqlite_shape = 'DIFF';
      } catch (e) {
        // The third store is a comparison, not the subject: a failure drops only its column.
        row.node_sqlite_error = String(e?.message ?? e).split('\n')[0];
        thirdOp = null;
      }
    }

    let addonWarm = 0;
    if (addonOp) {
      let addonLast;
      const at0 = process.hrtime.bigint();
      try {
        for (let i = 0; i < w; i++) addonLast = addonOp(i);
        addonWarm = Number(process.hrtime.bigint() - at0) / 1e3 / w;
        row.shape = shape(addonLast) === shape(baseLast) ? 'same' : 'DIFF';
        if (row.shape === 'DIFF') row.shape_detail = { addon: shape(addonLast), baseline: shape(baseLast) };
      } catch (e) {
        row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
        addonOp = null;
      }
    }

    // Calls per repetition and per slice. One repetition is a series of equal slices,
    // alternating sides (A B A B … or B A B A …, flipped every repetition), so a load change
    // on this shared machine hits both sides, and both sides make the same calls in the same
    // slices. For a writing method in "quiet" WAL mode (the default, used when the addon has
    // its `db` facade to run the PRAGMA on its own connection), slices stay under
    // ~QUIET_FRAMES WAL frames and both files are checkpointed, untimed, before every slice:
    // SQLite's automatic checkpoint (an fsync every ~1000 frames, the same work on both
    // sides) then never lands inside a timed slice, where it only adds noise. Otherwise
    // ("natural") the automatic checkpoints stay in the timings.
    const n = Math.max(20, Math.min(200000, Math.round((opts.ms * 1000) / Math.max(baseWarm, addonWarm, thirdWarm))));
    let quiet = opts.wal === 'quiet' && framesPerCall > 0 && addonOp != null;
    if (quiet) {
      try {
        checkpoint(addon); // needs the addon's db facade
        if (third) checkpoint(third);
      } catch {
        quiet = false;
      }
    }
    if (framesPerCall > 0 && addonOp) row.wal = quiet ? 'quiet' : 'natural';
    // Slices of a writing method stay under ~QUIET_FRAMES WAL frames in both modes: in
    // "natural" mode a slice pair then holds at most one automatic checkpoint, and the
    // median over slice pairs (below) sets that pair aside.
    let per = Math.ceil(n / SLICES);
    if (framesPerCall > 0) per = Math.max(1, Math.min(per, Math.floor(QUIET_FRAMES / framesPerCall)));
    const slices = Math.max(SLICES, Math.ceil(n / per));
    row.n = slices * per;
    row.slice = per;
    const a = [];
    const b = [];
    const t = [];
    const ratios = [];
    const thirdRatios = [];
    let ai = w;
    let bi = w;
    let ti = w;
    // The sides in each slice, rotated every repetition (a b t, b t a, t a b, …).
    const sides = ['a', 'b', ...(thirdOp ? ['t'] : [])];
    for (let r = 0; r < opts.reps; r++) {
      const order = sides.map((_, k) => sides[(k + r) % sides.length]);
      let ta = 0;
      let tb = 0;
      let tt = 0;
      const pairs = [];
      const thirdPairs = [];
      gc();
      for (let k = 0; k < slices; k++) {
        if (quiet) {
          checkpoint(base);
          checkpoint(addon);
          if (third) checkpoint(third);
        }
        let sa = 0;
        let sb = 0;
        let st = 0;
        for (const side of order) {
          if (side === 'b') {
            sb = timeRun(baseOp, bi, per);
            bi += per;
          } else if (side === 't') {
            st = timeRun(thirdOp, ti, per);
            ti += per;
          } else if (addonOp) {
            sa = timeRun(addonOp, ai, per);
            ai += per;
          }
        }
        ta += sa;
        tb += sb;
        tt += st;
        if (addonOp) pairs.push(sa / sb);
        if (addonOp && thirdOp) thirdPairs.push(sa / st);
      }
      b.push(tb / slices);
      if (thirdOp) t.push(tt / slices);
      if (addonOp) {
        a.push(ta / slices);
        ratios.push(median(pairs)); // this repetition's ratio: the median over its slice pairs
        if (thirdOp) thirdRatios.push(median(thirdPairs));
      }
    }
    row.baseline_us = median(b);
    if (thirdOp) row.node_sqlite_us = median(t);
    if (!addonOp) {
      if (!row.status) row.status = 'n/a (not implemented)';
      row.reps = { baseline_us: b };
      return row;
    }
    row.addon_us = median(a);
    row.ratio = median(ratios);
    row.ratio_interval = medianInterval(ratios);
    if (thirdOp) row.ratio_node_sqlite = median(thirdRatios);
    row.reps = { addon_us: a, baseline_us: b, node_sqlite_us: t, ratios, node_sqlite_ratios: thirdRatios };
    if (!opts.aa) row.floor_us = floorOf(c, createStore, dir, per);
    row.status = row.ratio <= target ? 'pass' : 'miss';
    return row;
  } catch (e) {
    row.status = `error: ${String(e?.message ?? e).split('\n')[0]}`;
    return row;
  } finally {
    for (const h of [addon, base, third]) {
      try { h?.close(); } catch {}
    }
  }
}

// ---------------------------------------------------------------- table

function fmt(x) {
  if (x == null) return '-';
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

function printTable(rows) {
  const head = ['method', 'area', 'addon µs', 'b-sqlite3 µs', 'node:sqlite µs', 'floor µs', 'ratio', 'vs node:sqlite', 'target', 'result', 'shape', 'wal'];
  const ratio = (x) => (x == null ? '-' : x.toFixed(2));
  const body = rows.map((r) => [
    r.method, r.area, fmt(r.addon_us), fmt(r.baseline_us), fmt(r.node_sqlite_us), fmt(r.floor_us), ratio(r.ratio),
    ratio(r.ratio_node_sqlite), `≤ ${r.target}`, r.status, r.shape ?? '-', r.wal ?? '-',
  ]);
  const widths = head.map((h, k) => Math.max(h.length, ...body.map((b) => b[k].length)));
  const line = (cells) => cells.map((c, k) => (k >= 2 && k <= 8 ? c.padStart(widths[k]) : c.padEnd(widths[k]))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

// ---------------------------------------------------------------- main

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench: ${e.message}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log('usage: node bench/run.mjs [--schema 6|7|8] [--reps N>=5] [--only name,name] [--json file] [--ms per-run-ms] [--wal-natural] [--aa] [--keep]');
    console.log(`methods: ${CASES.map((c) => c.name).join(', ')}`);
    return;
  }
  let cases = CASES;
  if (opts.only) {
    const unknown = opts.only.filter((n) => !CASES.some((c) => c.name === n));
    if (unknown.length) {
      console.error(`bench: unknown method(s): ${unknown.join(', ')}\nknown: ${CASES.map((c) => c.name).join(', ')}`);
      process.exit(2);
    }
    cases = CASES.filter((c) => opts.only.includes(c.name));
  }
  schemaVersion = opts.schema;

  let createStore;
  if (opts.aa) {
    // A/A run: the baseline against itself; the spread of its ratios around 1.00 is the
    // noise floor of this machine at this moment.
    createStore = baselineStore;
  } else {
    try {
      ({ createStore } = await import(ENTRIES[opts.schema]));
    } catch (e) {
      console.error(`bench: cannot load the addon (build it first with \`npm run build\`): ${e.message}`);
      process.exit(1);
    }
  }
  const build = opts.aa ? 'none (A/A run: baseline vs baseline)' : buildKind();
  const betterVersion = require('better-sqlite3/package.json').version;
  console.log(`addon build: ${build}; better-sqlite3 ${betterVersion}; node ${process.version}; ` +
    `node:sqlite ${NodeSqlite ? `SQLite ${nodeSqliteVersion()}` : 'none'}; schema ${opts.schema}; reps ${opts.reps}; ~${opts.ms} ms per timed run; WAL ${opts.wal}`);
  if (build === 'debug') console.log('WARNING: the addon is a debug build; run `npm run build` (release) for meaningful numbers.');
  if (!opts.aa && !hasFloor()) {
    console.log('floor: not measured: this binary has no floor recorder (a release build); `npm run build:bench` builds one with it.');
  }

  const dir = mkdtempSync(join(tmpdir(), 'tfx-bench-'));
  console.log(`sqlite: addon ${sqliteVersion(() => createStore(join(dir, 'probe.addon.db')))}, ` +
    `baseline ${sqliteVersion(() => baselineStore(join(dir, 'probe.baseline.db')))}`);
  const rows = [];
  const t0 = Date.now();
  try {
    for (const c of cases) {
      const row = runCase(c, createStore, dir, opts);
      rows.push(row);
      const info = row.ratio == null ? row.status : `ratio ${row.ratio.toFixed(2)} (${row.status})`;
      process.stderr.write(`  ${c.name}: ${info}\n`);
    }
  } finally {
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`databases kept in ${dir}`);
  }
  console.log('');
  printTable(rows);
  const measured = rows.filter((r) => r.ratio != null);
  const missed = measured.filter((r) => r.status === 'miss');
  const geomean = (xs) => (xs.length ? Math.exp(xs.reduce((sum, x) => sum + Math.log(x), 0) / xs.length) : null);
  const storeRows = measured.filter((r) => r.area !== 'facade');
  const gm = geomean(storeRows.map((r) => r.ratio));
  const gmNode = geomean(storeRows.filter((r) => r.ratio_node_sqlite != null).map((r) => r.ratio_node_sqlite));
  if (gm != null) {
    console.log(`\ngeometric mean of the ${storeRows.length} store rows: ${gm.toFixed(2)} vs better-sqlite3` +
      (gmNode != null ? `, ${gmNode.toFixed(2)} vs node:sqlite` : ' (node:sqlite: not in this Node)') +
      `; highest store ratio ${Math.max(...storeRows.map((r) => r.ratio)).toFixed(2)} (${storeRows.reduce((m, r) => (r.ratio > m.ratio ? r : m)).method})`);
  }
  console.log(`\n${measured.length} measured, ${measured.length - missed.length} pass, ${missed.length} miss, ` +
    `${rows.length - measured.length} not measured; ${((Date.now() - t0) / 1000).toFixed(0)} s. ` +
    'ratio = median over repetitions of addon/baseline time per op (lower is better).');
  for (const r of rows.filter((x) => x.node_sqlite_error || x.node_sqlite_shape)) {
    console.log(`node:sqlite ${r.method}: ${r.node_sqlite_error ?? 'result shape differs'}`);
  }
  for (const r of rows.filter((x) => x.shape === 'DIFF')) {
    console.log(`shape differs for ${r.method}:\n  addon:    ${r.shape_detail.addon}\n  baseline: ${r.shape_detail.baseline}`);
  }
  if (opts.json) {
    writeFileSync(opts.json, `${JSON.stringify({
      date: new Date().toISOString(), node: process.version, platform: `${process.platform}-${process.arch}`, geomean: gm, geomean_node_sqlite: gmNode,
      better_sqlite3: betterVersion, addon_build: build, reps: opts.reps, ms_per_run: opts.ms, wal: opts.wal, rows,
    }, null, 2)}\n`);
    console.log(`wrote ${opts.json}`);
  }
}

await main();
