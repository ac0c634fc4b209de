// Opening a hub database for the command: checks that turn bad input into one-line
// errors before SQLite sees the file, a read-only connection through this package's
// `Database` (never `createStore`, which would migrate the file), and the schema version.

import { statSync } from 'node:fs';

import { Database } from 'triflux-native-store';
import { createStore as createStoreV6 } from 'triflux-native-store/v6';
import { createStore as createStoreV7 } from 'triflux-native-store/v7';
import { createStore as createStoreV8 } from 'triflux-native-store/v8';

import { journalBytes, readHead, walBytes, WAL_HEADER_BYTES } from './files.mjs';
import { CliError, println, visible } from './util.mjs';

/** Each schema version this package has a store of, and the entry that serves it. */
const STORES = {
  6: { entry: 'triflux-native-store', createStore: createStoreV6 },
  7: { entry: 'triflux-native-store/v7', createStore: createStoreV7 },
  8: { entry: 'triflux-native-store/v8', createStore: createStoreV8 },
};
/** The newest schema version this package's stores write. */
export const NEWEST_SCHEMA_VERSION = 8;
/** The oldest one: a file of an older version is compared with it (its store migrates the file). */
export const OLDEST_SCHEMA_VERSION = 6;

/**
 * The store that answers for a file of schema `version`: the one of that version, or for
 * an older file the oldest store (a hub of that release migrates it when it opens it).
 * { version, entry, createStore }.
 */
export function storeFor(version) {
  const v = Math.max(OLDEST_SCHEMA_VERSION, version);
  return { version: v, ...STORES[v] };
}

const SQLITE_HEADER = 'SQLite format 3\u0000';

/**
 * Checks that `path` names an existing SQLite file without opening it through SQLite
 * (reads its first 16 bytes only). Throws a CliError naming the problem.
 */
export function checkFile(path) {
  if (path === undefined || path === '') throw new CliError('missing database path');
  let info;
  try {
    info = statSync(path);
  } catch (error) {
    if (error.code === 'ENOENT') throw new CliError(`${path}: no such file`);
    throw new CliError(`${path}: ${error.message}`);
  }
  if (!info.isFile()) throw new CliError(`${path}: not a regular file`);
  if (info.size === 0) throw new CliError(`${path}: empty file, not a SQLite database`);
  let header;
  try {
    header = readHead(path, 16);
  } catch (error) {
    throw new CliError(`${path}: ${error.message}`);
  }
  if (header.toString('latin1') !== SQLITE_HEADER) throw new CliError(`${path}: not a SQLite database`);
  return info;
}

/** An SQLite error as a one-line CliError about `path` (the SqliteError is its `cause`); other errors as they are. */
export function cliError(path, error) {
  if (error && error.name === 'SqliteError') return new CliError(`${path}: ${error.message} (${error.code})`, 2, { cause: error });
  return error;
}

/** Runs `fn`, turning SQLite's errors into one-line CliErrors about `path`. */
export function sqlite(path, fn) {
  try {
    return fn();
  } catch (error) {
    throw cliError(path, error);
  }
}

/** The errors of a read-only open that cannot take SQLite's shared locks or create its -shm. */
const CANNOT_LOCK = /^SQLITE_(READONLY|CANTOPEN)/;

/**
 * A read-only connection to `path`. SQLite's usual read-only open needs a -shm it can
 * create or map for a WAL file; where it cannot (a directory this user cannot write, read-
 * only media) and the file has no -wal to read, the file is opened immutable instead and
 * `io` gets one line saying so. A -wal with transactions in it, or a -journal of an
 * interrupted transaction, cannot be read that way, so those stay errors. Returns { db, immutable }.
 */
export function openReadOnly(path, { busyTimeout = 5000, io, quiet = false } = {}) {
  const shared = sqlite(path, () => new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeout }));
  let failure;
  try {
    // The first read takes the locks (and maps the -shm of a WAL file).
    shared.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    return { db: shared, immutable: false };
  } catch (error) {
    shared.close();
    if (!(error && error.name === 'SqliteError' && CANNOT_LOCK.test(error.code))) throw cliError(path, error);
    failure = error;
  }
  if (journalBytes(path) > 0) {
    throw new CliError(
      `${path}: cannot be read here: its -journal holds an interrupted transaction that SQLite must roll back first (${failure.code}); ` +
        'run this as a user who may write the directory',
    );
  }
  if (walBytes(path) > WAL_HEADER_BYTES) {
    throw new CliError(
      `${path}: cannot be read here: its -wal holds transactions and SQLite cannot open its -shm to read them (${failure.code}); ` +
        'run this as a user who may write the directory, or copy the database with its -wal to a writable place',
    );
  }
  const db = sqlite(path, () => new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeout, immutable: true }));
  if (io && !quiet) {
    println(
      io.stderr,
      `triflux-store: note: ${visible(path)} is read immutable (as it is on disk, without locks): SQLite cannot share-lock it here (${failure.code}) and it has no -wal to read`,
    );
  }
  return { db, immutable: true };
}

/**
 * The file's schema version from `_meta`, checked: a number no newer than the newest
 * store's. Older versions are returned (the hub migrates them when it opens the file).
 */
export function schemaVersion(db, path) {
  return sqlite(path, () => {
    const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_meta'").get();
    if (!meta) throw new CliError(`${path}: not a triflux hub database (no _meta table)`);
    const row = db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").get();
    if (!row || row.value == null) throw new CliError(`${path}: not a triflux hub database (no schema_version in _meta)`);
    const text = String(row.value);
    if (!/^\d+$/.test(text)) throw new CliError(`${path}: unknown schema version "${text}"`);
    const version = Number(text);
    if (version > NEWEST_SCHEMA_VERSION) {
      throw new CliError(
        `${path}: schema version ${version} is newer than this triflux-store understands (${NEWEST_SCHEMA_VERSION}); use a newer triflux-native-store`,
      );
    }
    return version;
  });
}

/**
 * Opens `path` read-only (the file must exist and be a hub database of schema version
 * 8 or older): see openReadOnly. `busyTimeout` is SQLite's busy timeout in ms; with
 * `readonly: false` the validated file is reopened read-write. Returns { db, version, immutable }.
 */
export function openHub(path, { busyTimeout = 5000, readonly = true } = {}, io = undefined) {
  checkFile(path);
  // Validate with a read-only connection first: a read-write connection may checkpoint
  // the WAL into the file when it closes, and bad input must never change the file.
  const { db, immutable } = openReadOnly(path, { busyTimeout, io, quiet: !readonly });
  let version;
  try {
    version = schemaVersion(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  if (readonly) return { db, version, immutable };
  db.close();
  const rw = sqlite(path, () => new Database(path, { fileMustExist: true, timeout: busyTimeout }));
  return { db: rw, version, immutable: false };
}

/** Names of the tables in the file, without SQLite's own (sqlite_*). */
export function tableNames(db) {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .pluck()
    .all();
}

/** Throws a one-line error unless every table in `needed` exists (older schema versions lack some). */
export function requireTables(db, path, version, needed) {
  const have = new Set(tableNames(db));
  const missing = needed.filter((t) => !have.has(t));
  if (missing.length > 0) {
    throw new CliError(
      `${path}: schema version ${version} has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''} (the hub adds ${missing.length > 1 ? 'them' : 'it'} when it next opens the file)`,
    );
  }
}

/** Double-quotes an SQL identifier. */
export function ident(name) {
  return `"${String(name).replace(/"/g, '""')}"`;
}
