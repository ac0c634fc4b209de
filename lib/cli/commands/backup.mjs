// `triflux-store backup <db> <out>`: an online, consistent copy while the hub keeps
// writing, through `Database.prototype.backup` (SQLite's online backup, stepped from JS so
// the event loop stays free). `--vacuum` writes a compacted copy with VACUUM INTO (one
// snapshot, no progress). The copy is checked (quick_check, row counts) before reporting.

import { existsSync, realpathSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { Database } from 'triflux-native-store';

import { ident, openHub, sqlite, tableNames } from '../open.mjs';
import { CliError, bytes, duration, int, intOption, pairs, printJson, println } from '../util.mjs';

const MAX_STEP = 0x7fffffff;
const BAR_WIDTH = 30;

function sameFile(a, b) {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}

/** Windows refuses to delete a file another process has open (EBUSY, or EPERM). */
function removeOld(file) {
  try {
    rmSync(file, { force: true });
  } catch (error) {
    if (error.code !== 'EBUSY' && error.code !== 'EPERM') throw error;
    throw new CliError(`${file}: is open in another process and cannot be replaced (Windows deletes no open file); close it there first`);
  }
}

function prepareDestination(source, out, force) {
  if (out === '') throw new CliError('backup: empty <out> path');
  if (!existsSync(dirname(resolve(out)))) throw new CliError(`${out}: directory does not exist`);
  if (existsSync(out)) {
    if (sameFile(source, out)) throw new CliError(`${out}: is the database itself`);
    if (!statSync(out).isFile()) throw new CliError(`${out}: exists and is not a file`);
    if (!force) throw new CliError(`${out}: already exists (pass --force to replace it)`);
    for (const suffix of ['', '-wal', '-shm', '-journal']) removeOld(`${out}${suffix}`);
  }
}

/** Progress output: a bar redrawn in place on a terminal, a line per 10% otherwise. */
function progressReporter(io, json) {
  const stream = io.stderr;
  let lastBucket = -1;
  let drawn = false;
  return {
    update(copied, total) {
      if (json && !io.isTTY) return;
      const fraction = total > 0 ? Math.min(1, copied / total) : 1;
      const percent = Math.floor(fraction * 100);
      if (io.isTTY) {
        const filled = Math.round(fraction * BAR_WIDTH);
        stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}%  ${int(copied)}/${int(total)} pages`);
        drawn = true;
      } else {
        const bucket = Math.floor(percent / 10);
        if (bucket !== lastBucket) {
          lastBucket = bucket;
          println(stream, `backup: ${percent}% (${int(copied)} of ${int(total)} pages)`);
        }
      }
    },
    note(text) {
      if (json && !io.isTTY) return;
      if (io.isTTY && drawn) stream.write('\n');
      drawn = false;
      println(stream, `backup: ${text}`);
    },
    done() {
      if (io.isTTY && drawn) stream.write('\n');
    },
  };
}

/** Opens the finished copy (read-write: it is ours, and closing it leaves no -wal/-shm). */
function verifyCopy(out) {
  const db = sqlite(out, () => new Database(out, { fileMustExist: true }));
  try {
    return sqlite(out, () => {
      const check = db.pragma('quick_check').map((row) => Object.values(row)[0]);
      const tables = {};
      for (const name of tableNames(db)) tables[name] = db.prepare(`SELECT COUNT(*) FROM ${ident(name)}`).pluck().get();
      return {
        quick_check: check.length === 1 && check[0] === 'ok' ? 'ok' : check,
        page_size: db.pragma('page_size', { simple: true }),
        page_count: db.pragma('page_count', { simple: true }),
        schema_version: db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get() ?? null,
        tables,
      };
    });
  } finally {
    db.close();
  }
}

export async function run({ args, options, io }) {
  const [path, out] = args;
  let step = intOption(options.step, 'step', { min: 1 }) ?? 100;
  const { db } = openHub(path, options);
  const report = progressReporter(io, options.json);
  const started = Date.now();
  let restarts = 0;
  let steps = 0;
  try {
    prepareDestination(path, out, options.force);
    if (options.vacuum) {
      report.note(`VACUUM INTO ${out} (one consistent snapshot, compacted)`);
      sqlite(path, () => db.prepare('VACUUM INTO ?').run(out));
    } else {
      let previousRemaining = Infinity;
      try {
        await db.backup(out, {
          progress({ totalPages, remainingPages }) {
            steps += 1;
            // The hub wrote between two steps: SQLite restarts the copy. Larger steps
            // (each one a single read snapshot) let it finish while writes continue.
            if (remainingPages >= previousRemaining) {
              restarts += 1;
              step = Math.min(MAX_STEP, step * 2);
            }
            previousRemaining = remainingPages;
            report.update(totalPages - remainingPages, totalPages);
            return step;
          },
        });
      } catch (error) {
        if (error && error.name === 'SqliteError') throw new CliError(`${out}: ${error.message} (${error.code})`);
        if (error instanceof TypeError) throw new CliError(`${out}: ${error.message}`);
        throw error;
      }
    }
  } finally {
    db.close();
  }
  const copy = verifyCopy(out);
  if (!options.vacuum) report.update(copy.page_count, copy.page_count);
  report.done();
  const ok = copy.quick_check === 'ok';
  const result = {
    source: path,
    destination: out,
    mode: options.vacuum ? 'vacuum' : 'backup',
    page_size: copy.page_size,
    pages: copy.page_count,
    bytes: statSync(out).size,
    steps,
    restarts,
    elapsed_ms: Date.now() - started,
    schema_version: copy.schema_version === null ? null : Number(copy.schema_version),
    quick_check: copy.quick_check,
    tables: copy.tables,
  };
  if (options.json) {
    printJson(io.stdout, result);
    return ok ? 0 : 1;
  }
  println(
    io.stdout,
    pairs([
      ['copy', `${out} (${result.mode === 'vacuum' ? 'VACUUM INTO' : 'online backup'})`],
      ['size', `${int(result.pages)} pages, ${bytes(result.bytes)}`],
      [
        'time',
        `${duration(result.elapsed_ms)}${
          result.mode === 'backup'
            ? `, ${steps} step${steps === 1 ? '' : 's'}${restarts > 0 ? `, restarted ${restarts} time${restarts === 1 ? '' : 's'} (the hub wrote meanwhile)` : ''}`
            : ''
        }`,
      ],
      ['quick_check', ok ? 'ok' : copy.quick_check.join('; ')],
      ['rows', Object.entries(copy.tables).map(([t, n]) => `${t} ${int(n)}`).join(', ')],
    ]),
  );
  return ok ? 0 : 1;
}
