// Benchmark: better-sqlite3's own benchmark trials (its `benchmark/` folder: the same
// tables, data, SQL, row counts and pragmas), run for better-sqlite3 built for the running
// Node, this package's `triflux-native-store/better-sqlite3` and node:sqlite where the Node
// has it. As upstream, every measurement is a fresh process that opens the seeded file;
// the read trials run first, and every write trial starts from tables cut to one row and
// vacuumed. Each repetition measures every driver once (in a rotating order); a trial's
// figure is the median time per call over the repetitions, and `ratio` is this package's
// median over better-sqlite3's (lower is better; ≤ 1.00 is at least as fast). The noise
// is beside it: the lowest and highest of the repetitions' own ratios, their median and,
// from six repetitions on, a 95% interval for that median (bench/stats.mjs); the same
// interval for the ratio to node:sqlite. `--json` keeps every measurement's time.
//
//   node bench/trials.mjs [--reps N] [--ms N] [--only select-all,large_blob] [--default] [--json out.json]
//   node bench/trials.mjs --seed FILE       (writes the trials' database and stops: for
//                                            profiling one measurement, `--child '<json>'`)
//   node bench/all-nodes.mjs --bench trials --nodes 20,22,24,26 -- --reps 11

// --default runs upstream's default five trials (four columns of `small`); otherwise the
// searchable ones (each column of `small`, `large_text`, `large_blob`). --only keeps the
// trials whose name contains every comma-separated term.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadReference } from '../tools/reference.mjs';
import { intervalText, median, medianInterval } from './stats.mjs';

const require = createRequire(import.meta.url);

const TABLES = {
  small: {
    schema: '(nul, integer INTEGER, real REAL, text TEXT, blob BLOB)',
    data: () => [null, 0x7fffffff, 1 / 3, 'this is the text', Buffer.from('this is the blob')],
  },
  large_text: { schema: '(text TEXT)', data: () => ['this is the text'.repeat(2048)] },
  large_blob: { schema: '(blob BLOB)', data: () => [Buffer.from('this is the blob'.repeat(2048))] },
};
const COUNT = 10_000;
const PRAGMA = ['cache_size = -16000', 'journal_mode = WAL', 'synchronous = NORMAL'];

/** What one call of each trial type does, on a better-sqlite3-shaped `db` (and node:sqlite's). */
const TYPES = {
  select: {
    readonly: true,
    make(db, { table, columns }) {
      const stmt = db.prepare(`SELECT ${columns.join(', ')} FROM ${table} WHERE rowid = ?`);
      let rowid = -1;
      return () => stmt.get((++rowid % COUNT) + 1);
    },
  },
  'select-all': {
    readonly: true,
    make(db, { table, columns }) {
      const stmt = db.prepare(`SELECT ${columns.join(', ')} FROM ${table} WHERE rowid >= ? LIMIT 100`);
      let rowid = -100;
      return () => stmt.all(((rowid += 100) % COUNT) + 1);
    },
  },
  'select-iterate': {
    readonly: true,
    make(db, { table, columns }) {
      const stmt = db.prepare(`SELECT ${columns.join(', ')} FROM ${table} WHERE rowid >= ? LIMIT 100`);
      let rowid = -100;
      return () => {
        // eslint-disable-next-line no-unused-vars
        for (const row of stmt.iterate(((rowid += 100) % COUNT) + 1));
      };
    },
  },
  insert: {
    readonly: false,
    make(db, { table, columns }) {
      const stmt = db.prepare(insertSql(table, columns));
      const row = db.prepare(`SELECT ${columns.join(', ')} FROM ${table} LIMIT 1`).get();
      return () => stmt.run(row);
    },
  },
  transaction: {
    readonly: false,
    make(db, { table, columns, driver }) {
      const stmt = db.prepare(insertSql(table, columns));
      const row = db.prepare(`SELECT ${columns.join(', ')} FROM ${table} LIMIT 1`).get();
      if (driver === 'node:sqlite') {
        return () => {
          db.exec('BEGIN');
          try {
            for (let i = 0; i < 100; ++i) stmt.run(row);
            db.exec('COMMIT');
          } catch (error) {
            if (db.isTransaction) db.exec('ROLLBACK');
            throw error;
          }
        };
      }
      const trx = db.transaction((r) => {
        for (let i = 0; i < 100; ++i) stmt.run(r);
      });
      return () => trx(row);
    },
  },
};

/** This package's time over another driver's, repetition by repetition (they ran one after the other). */
function paired(ours, theirs) {
  return ours.map((t, rep) => t / theirs[rep]);
}

function insertSql(table, columns) {
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`;
}

const DEFAULT_TRIALS = ['select', 'select-all', 'select-iterate', 'insert', 'transaction'].map((type) => ({
  type,
  table: 'small',
  columns: ['nul', 'integer', 'real', 'text'],
}));
const SEARCHABLE_TRIALS = Object.keys(TYPES).flatMap((type) => [
  ...['nul', 'integer', 'real', 'text', 'blob'].map((column) => ({ type, table: 'small', columns: [column] })),
  { type, table: 'large_text', columns: ['text'] },
  { type, table: 'large_blob', columns: ['blob'] },
]);

const trialName = (t) => `${t.type} ${t.table} (${t.columns.join(', ')})`;

/** The drivers of this Node: name → a module path the child opens with. */
function drivers() {
  const list = ['better-sqlite3', 'triflux'];
  if (hasNodeSqlite()) list.push('node:sqlite');
  return list;
}

function hasNodeSqlite() {
  try {
    return typeof require('node:sqlite').DatabaseSync === 'function';
  } catch {
    return false;
  }
}

function open(driver, file) {
  if (driver === 'node:sqlite') {
    const db = new (require('node:sqlite').DatabaseSync)(file);
    for (const p of PRAGMA) db.exec(`PRAGMA ${p}`);
    return db;
  }
  const Database = driver === 'triflux' ? require('../better-sqlite3.cjs') : loadReference();
  const db = new Database(file);
  for (const p of PRAGMA) db.pragma(p);
  return db;
}

/** The child: one trial on one driver, `ms` of calls after a warm-up; prints ns per call. */
function measure({ driver, file, trial, ms }) {
  const db = open(driver, file);
  if (!TYPES[trial.type].readonly) {
    for (const table of Object.keys(TABLES)) db.exec(`DELETE FROM ${table} WHERE rowid > 1;`);
    db.exec('VACUUM;');
  }
  const fn = TYPES[trial.type].make(db, { ...trial, driver });
  const until = (budget) => {
    let calls = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(Math.round(budget * 1e6));
    let now = start;
    // Calls in batches, so reading the clock stays a small part of a fast call's time.
    for (let batch = 1; now < end; batch = Math.min(batch * 2, 1024)) {
      for (let i = 0; i < batch; i++) fn();
      calls += batch;
      now = process.hrtime.bigint();
    }
    return Number(now - start) / calls;
  };
  until(Math.max(ms / 4, 50));
  process.stdout.write(JSON.stringify({ ns: until(ms) }));
}

function seed(file) {
  const Database = loadReference();
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  for (const [name, { schema, data }] of Object.entries(TABLES)) {
    db.exec(`CREATE TABLE ${name} ${schema}`);
    const values = data();
    const insert = db.prepare(`INSERT INTO ${name} VALUES (${values.map(() => '?').join(', ')})`).bind(values);
    db.transaction(() => {
      for (let i = 0; i < COUNT; ++i) insert.run();
    })();
  }
  db.close();
}

/** `--seed FILE`: the trials' database alone, written to a new file. */
function seedOnly(file) {
  if (!file || existsSync(file)) {
    console.error(`usage: node bench/trials.mjs --seed FILE (a file that does not exist yet${file ? `; ${file} does` : ''})`);
    process.exit(2);
  }
  seed(file);
}

function main() {
  const arg = (name, fallback) => {
    const at = process.argv.indexOf(`--${name}`);
    return at >= 0 ? process.argv[at + 1] : fallback;
  };
  const reps = Number(arg('reps', 5));
  const ms = Number(arg('ms', 300));
  const only = arg('only', '').split(',').filter(Boolean);
  const json = arg('json', null);
  const trials = (process.argv.includes('--default') ? DEFAULT_TRIALS : SEARCHABLE_TRIALS)
    .filter((t) => only.every((term) => trialName(t).includes(term)))
    .sort((a, b) => TYPES[b.type].readonly - TYPES[a.type].readonly);
  const names = drivers();
  const dir = mkdtempSync(join(tmpdir(), 'triflux-trials-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'benchmark.db');
  seed(file);
  console.log(`better-sqlite3's benchmark trials on Node ${process.versions.node}: ${names.join(', ')}; ` +
    `median of ${reps} repetitions, ${ms} ms of calls each, a fresh process per measurement`);
  const unit = (v) => `${(v / 1000).toFixed(2)} µs`;
  const results = [];
  for (const trial of trials) {
    const times = Object.fromEntries(names.map((d) => [d, []]));
    for (let rep = 0; rep < reps; rep++) {
      for (let k = 0; k < names.length; k++) {
        const driver = names[(rep + k) % names.length];
        const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify({ driver, file, trial, ms })], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        if (child.status !== 0) {
          throw new Error(`${trialName(trial)} on ${driver} failed (exit ${child.status}, signal ${child.signal}):\n${child.stderr}`);
        }
        times[driver].push(JSON.parse(child.stdout).ns);
      }
    }
    const row = { trial: trialName(trial), ...Object.fromEntries(names.map((d) => [d, median(times[d])])) };
    row.ratio = row.triflux / row['better-sqlite3'];
    // The noise: this package's time over better-sqlite3's within each repetition (the
    // two ran one after the other): lowest, highest, median and that median's interval.
    const perRep = paired(times.triflux, times['better-sqlite3']);
    row.ratioRange = [Math.min(...perRep), Math.max(...perRep)];
    row.pairedMedian = median(perRep);
    row.pairedInterval = medianInterval(perRep);
    if (row['node:sqlite'] !== undefined) {
      row.vsNodeSqlite = row.triflux / row['node:sqlite'];
      row.vsNodeSqliteInterval = medianInterval(paired(times.triflux, times['node:sqlite']));
    }
    row.times = times;
    results.push(row);
    const cells = names.map((d) => `${d} ${unit(row[d])}`).join(' | ');
    const range = row.ratioRange.map((r) => r.toFixed(2)).join('-');
    const interval = row.pairedInterval && `, within ${intervalText(row.pairedInterval)}`;
    const nodeInterval = row.vsNodeSqliteInterval && ` (repetitions' median within ${intervalText(row.vsNodeSqliteInterval)})`;
    console.log(`${row.trial.padEnd(34)} ${cells} | ratio ${row.ratio.toFixed(2)} ` +
      `(repetitions ${range}; their median ${row.pairedMedian.toFixed(2)}${interval || ''})` +
      (row.vsNodeSqlite !== undefined ? ` | vs node:sqlite ${row.vsNodeSqlite.toFixed(2)}${nodeInterval || ''}` : ''));
  }
  const worst = results.reduce((w, r) => (r.ratio > w.ratio ? r : w), results[0]);
  const over = results.filter((r) => r.ratio > 1).length;
  // Above 1.00 beyond the noise: the whole interval of the repetitions' median is. The
  // trials so (against one driver, by its interval's key), or "none".
  const beyondNoise = (interval) =>
    results.filter((r) => r[interval] && r[interval].low > 1).map((r) => r.trial).join(', ') || 'none';
  console.log(`summary: ${results.length} trials, ${over} above 1.00; worst ${worst.trial} ${worst.ratio.toFixed(2)}` +
    (results.some((r) => r.pairedInterval) ? `; above 1.00 beyond the noise (the 95% interval wholly above): ${beyondNoise('pairedInterval')}` : ''));
  if (results.some((r) => r.vsNodeSqliteInterval)) {
    console.log(`against node:sqlite: above 1.00 beyond the noise: ${beyondNoise('vsNodeSqliteInterval')}`);
  }
  if (json) writeFileSync(json, `${JSON.stringify({ node: process.versions.node, reps, ms, results }, null, 2)}\n`);
}

if (process.argv[2] === '--child') measure(JSON.parse(process.argv[3]));
else if (process.argv[2] === '--seed') seedOnly(process.argv[3]);
else main();
