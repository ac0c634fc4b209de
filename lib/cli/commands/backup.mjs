// `triflux-store backup <db> <out>`: an online, consistent copy while the hub keeps
// writing, through `Database.prototype.backup` (SQLite's online backup, stepped from JS so
// the event loop stays free). `--vacuum` writes a compacted copy with VACUUM INTO (one
// snapshot, no progress).
//
// The database may be the only copy of the hub's data, so <out> is refused, even with
// --force, when writing it could touch the database or a file of its set. The copy goes to
// a temporary file beside <out>, is checked (quick_check, row counts), synced and renamed
// into place; SIGINT and SIGTERM stop it and remove the temporary files.

import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

import { Database } from 'triflux-native-store';

import { SET_SUFFIXES, touchesDatabase } from '../files.mjs';
import { cliError, ident, openHub, sqlite, tableNames } from '../open.mjs';
import { CliError, bytes, duration, int, intOption, pairs, printJson, println, visible } from '../util.mjs';

const MAX_STEP = 0x7fffffff;
const BAR_WIDTH = 30;
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 };

/** Checks <out> before anything is opened or written; throws a one-line error. */
function checkDestination(source, out, force) {
  if (out === '') throw new CliError('backup: empty <out> path');
  const clash = touchesDatabase(source, out);
  if (clash) throw new CliError(`${out}: ${clash} (refused, even with --force: it may hold data that exists nowhere else)`);
  if (!existsSync(dirname(resolve(out)))) throw new CliError(`${out}: directory does not exist`);
  if (existsSync(out)) {
    if (!statSync(out).isFile()) throw new CliError(`${out}: exists and is not a file`);
    if (!force) throw new CliError(`${out}: already exists (pass --force to replace it)`);
  }
}

/**
 * A new, empty temporary file beside `out` (created exclusively, so never someone else's)
 * with the permission bits of the database `source` (the umask may narrow them): the copy
 * is never readable by more users than the database, from its first byte. Windows keeps
 * only a read-only flag in a mode, so there the file takes its folder's ACL.
 */
export function createTemporary(out, source) {
  const path = join(dirname(resolve(out)), `.${basename(out)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const mode = process.platform === 'win32' ? undefined : statSync(source).mode & 0o777;
  closeSync(openSync(path, 'wx', mode));
  return path;
}

function removeSet(path) {
  for (const suffix of SET_SUFFIXES) rmSync(`${path}${suffix}`, { force: true });
}

function fsyncPath(path, flags) {
  let fd;
  try {
    fd = openSync(path, flags);
    fsyncSync(fd);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Windows deletes and replaces no file another process has open: said plainly. */
function replacing(out, action) {
  try {
    action();
  } catch (error) {
    if (error.code !== 'EBUSY' && error.code !== 'EPERM') throw error;
    throw new CliError(`${out}: is open in another process and cannot be replaced (Windows deletes no open file); close it there first`);
  }
}

/** Puts the checked copy in place: synced, then renamed over <out>, then the directory synced. */
function install(temporary, out) {
  fsyncPath(temporary, 'r+');
  // A replaced <out> must not keep its old -wal or -journal: SQLite would apply them to the copy.
  for (const suffix of SET_SUFFIXES.slice(1)) replacing(out, () => rmSync(`${out}${suffix}`, { force: true }));
  replacing(out, () => renameSync(temporary, out));
  try {
    fsyncPath(dirname(resolve(out)), 'r');
  } catch {
    // Directories cannot be opened for syncing on every platform (Windows).
  }
}

/**
 * SIGINT and SIGTERM while the copy runs: the first stops the copy at its next step (the
 * command then removes the temporary files); a second removes them at once and exits.
 */
function interruptions(temporary) {
  const state = { signal: null };
  const handler = (signal) => {
    if (state.signal !== null) {
      removeSet(temporary);
      process.exit(SIGNAL_EXIT[signal]);
    }
    state.signal = signal;
  };
  for (const signal of Object.keys(SIGNAL_EXIT)) process.on(signal, handler);
  state.release = () => {
    for (const signal of Object.keys(SIGNAL_EXIT)) process.off(signal, handler);
  };
  return state;
}

class Interrupted extends Error {}

/** A turn of the event loop: a signal that came during synchronous work runs its handler. */
const signalsDelivered = () => new Promise((resolve) => setImmediate(resolve));

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
      drawn = false;
    },
  };
}

/** Opens the finished copy (read-write: it is ours, and closing it leaves no -wal/-shm). */
function verifyCopy(copyPath, out) {
  const db = sqlite(out, () => new Database(copyPath, { fileMustExist: true }));
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

/** Copies the open database into `temporary`; returns { steps, restarts }. */
async function copyInto(db, path, temporary, out, { vacuum, step, report, interrupted }) {
  if (vacuum) {
    report.note(`VACUUM INTO ${visible(out)} (one consistent snapshot, compacted)`);
    sqlite(path, () => db.prepare('VACUUM INTO ?').run(temporary));
    return { steps: 0, restarts: 0 };
  }
  let previousRemaining = Infinity;
  let steps = 0;
  let restarts = 0;
  try {
    await db.backup(temporary, {
      progress({ totalPages, remainingPages }) {
        if (interrupted.signal !== null) throw new Interrupted();
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
    if (error instanceof Interrupted) return { steps, restarts };
    if (error && error.name === 'SqliteError') throw cliError(out, error);
    if (error instanceof TypeError) throw new CliError(`${out}: ${error.message}`);
    throw error;
  }
  return { steps, restarts };
}

export async function run({ args, options, io }) {
  const [path, out] = args;
  const step = intOption(options.step, 'step', { min: 1 }) ?? 100;
  checkDestination(path, out, options.force);
  const { db } = openHub(path, options, io);
  const report = progressReporter(io, options.json);
  const started = Date.now();
  let temporary;
  let interrupted;
  let installed = false;
  let copy;
  let counts;
  let size;
  try {
    temporary = createTemporary(out, path);
    interrupted = interruptions(temporary);
    try {
      counts = await copyInto(db, path, temporary, out, { vacuum: options.vacuum, step, report, interrupted });
    } finally {
      db.close();
    }
    await signalsDelivered();
    if (interrupted.signal === null) {
      copy = verifyCopy(temporary, out);
      size = statSync(temporary).size;
      await signalsDelivered();
    }
    // A copy that fails its check does not replace anything.
    if (interrupted.signal === null && copy.quick_check === 'ok') {
      install(temporary, out);
      installed = true;
    }
  } catch (error) {
    if (error instanceof CliError || !error?.code) throw error;
    throw new CliError(`${out}: ${error.message}`);
  } finally {
    db.close();
    if (temporary !== undefined && !installed) removeSet(temporary);
    interrupted?.release();
  }
  if (interrupted.signal !== null) {
    report.done();
    println(io.stderr, `triflux-store: backup stopped by ${interrupted.signal}: the temporary copy was removed, ${visible(out)} was not written`);
    return SIGNAL_EXIT[interrupted.signal];
  }
  if (installed && !options.vacuum) report.update(copy.page_count, copy.page_count);
  report.done();
  const ok = installed;
  const result = {
    source: path,
    destination: out,
    mode: options.vacuum ? 'vacuum' : 'backup',
    written: installed,
    page_size: copy.page_size,
    pages: copy.page_count,
    bytes: size,
    steps: counts.steps,
    restarts: counts.restarts,
    elapsed_ms: Date.now() - started,
    schema_version: copy.schema_version === null ? null : Number(copy.schema_version),
    quick_check: copy.quick_check,
    tables: copy.tables,
  };
  if (options.json) {
    printJson(io.stdout, result);
    return ok ? 0 : 1;
  }
  const { steps, restarts } = counts;
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
      ['quick_check', ok ? 'ok' : `${copy.quick_check.join('; ')} (the copy was removed, ${out} was not written)`],
      ['rows', Object.entries(copy.tables).map(([t, n]) => `${t} ${int(n)}`).join(', ')],
    ]),
  );
  return ok ? 0 : 1;
}
