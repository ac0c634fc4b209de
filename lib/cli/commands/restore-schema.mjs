// `triflux-store restore-schema <db>`: the way back to the original store. Once its log
// reaches 10,000 messages this package's store replaces original indexes on `messages`
// by its large-log ones; the original store's query plans differ on those (rows with
// equal timestamps in another order, other rows at a LIMIT). This command gives the file
// the original's indexes on `messages` back: every index of either set is dropped and
// the original's are created again with a fresh original store's names, SQL and order,
// in one transaction, so the file's schema is the one a never-converted file has.
//
// It takes the file for itself first (SQLite's exclusive locking mode): while another
// connection — a running hub — has the file open, it changes nothing and exits 1.

import { Database } from 'triflux-native-store';

import { cliError, openHub, OLDEST_SCHEMA_VERSION, sqlite, storeFor } from '../open.mjs';
import { expectedSchema } from '../schema.mjs';
import { CliError, duration, pairs, printJson, println, visible } from '../util.mjs';

const INDEXES_ON_MESSAGES =
  "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql IS NOT NULL ORDER BY rowid";

/**
 * The indexes on messages of schema `version`'s original, { name, sql } in the order a
 * fresh store of that version creates them: a fresh store below the large-log threshold
 * has exactly the original's schema (its schema.sql, which the golden traces pin), so it
 * is read from one, in memory.
 */
function originalIndexes(version) {
  const store = storeFor(version).createStore(':memory:');
  try {
    return store.db.prepare(INDEXES_ON_MESSAGES).all();
  } finally {
    store.close();
  }
}

/** Names of the indexes on messages that only a converted (large-log) store of `version` has. */
function largeLogIndexNames(version) {
  const small = expectedSchema(false, version).indexes;
  return Object.entries(expectedSchema(true, version).indexes)
    .filter(([name, ix]) => ix.table === 'messages' && !(name in small))
    .map(([name]) => name);
}

const sameIndex = (a, b) => a.name === b.name && a.sql === b.sql;
const sameList = (a, b) => a.length === b.length && a.every((x, i) => sameIndex(x, b[i]));

/**
 * The file for this connection alone: exclusive locking mode, then a read. In WAL mode
 * every open connection holds a shared lock on the database file, so taking the exclusive
 * lock fails while a hub (or any reader) has the file open.
 */
function takeFile(path, busyTimeout) {
  const db = sqlite(path, () => new Database(path, { fileMustExist: true, timeout: busyTimeout }));
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    db.exec('BEGIN IMMEDIATE');
    db.exec('COMMIT');
    return db;
  } catch (error) {
    db.close();
    if (error && error.name === 'SqliteError' && error.code.startsWith('SQLITE_BUSY')) {
      throw new CliError(
        `${path}: another connection has the file open (a running hub?): stop it and run restore-schema again; nothing was changed`,
        1,
      );
    }
    throw cliError(path, error);
  }
}

/** Gives a converted file the original's indexes; returns the names dropped, created and (re)built. */
function restore(path, options, version, converted, large) {
  if (version < OLDEST_SCHEMA_VERSION) {
    // Only a file this package's store opened (and so migrated to its version) can have been converted.
    if (converted) throw new CliError(`${path}: schema version ${version} with large-log indexes: not a file this command can restore`);
    return { dropped: [], created: [], rebuilt: [] };
  }
  const original = originalIndexes(version);
  const ours = new Set([...large, ...original.map((ix) => ix.name)]);
  const db = takeFile(path, options.busyTimeout);
  try {
    const kept = sqlite(path, () => db.prepare(INDEXES_ON_MESSAGES).all()).filter((ix) => ours.has(ix.name));
    if (sameList(kept, original)) return { dropped: [], created: [], rebuilt: [] };
    // Every index of either set goes, and the original's come back in their order: the
    // planner meets a table's indexes in the order they were created.
    sqlite(path, () =>
      db.transaction(() => {
        for (const ix of kept) db.exec(`DROP INDEX "${ix.name.replace(/"/g, '""')}"`);
        for (const ix of original) db.exec(ix.sql);
      }).immediate(),
    );
    const after = sqlite(path, () => db.prepare(INDEXES_ON_MESSAGES).all()).filter((ix) => ours.has(ix.name));
    if (!sameList(after, original)) throw new CliError(`${path}: the indexes on messages are not the original's after the change`);
    return {
      dropped: kept.filter((ix) => !original.some((o) => sameIndex(o, ix))).map((ix) => ix.name),
      created: original.filter((ix) => !kept.some((k) => sameIndex(k, ix))).map((ix) => ix.name),
      rebuilt: original.map((ix) => ix.name),
    };
  } finally {
    db.close();
  }
}

export function run({ args, options, io }) {
  const path = args[0];
  const started = Date.now();
  const { db: check, version } = openHub(path, options, io);
  const large = new Set(largeLogIndexNames(storeFor(version).version));
  let converted;
  try {
    converted = sqlite(path, () => check.prepare(INDEXES_ON_MESSAGES).all()).some((ix) => large.has(ix.name));
  } finally {
    check.close();
  }
  const { dropped, created, rebuilt } = restore(path, options, version, converted, large);
  const result = {
    file: path,
    schema_version: version,
    changed: rebuilt.length > 0,
    dropped,
    created,
    rebuilt,
    elapsed_ms: Date.now() - started,
  };
  if (options.json) {
    printJson(io.stdout, result);
    return 0;
  }
  if (!result.changed) {
    println(io.stdout, `${visible(path)}: has the original store's indexes on messages already; nothing to do`);
    return 0;
  }
  println(
    io.stdout,
    pairs([
      ['dropped', dropped.join(', ') || '-'],
      ['created', created.join(', ') || '-'],
      ['indexes', `${rebuilt.length} on messages, as a fresh original v${version} store creates them (${rebuilt.join(', ')})`],
      ['time', duration(result.elapsed_ms)],
    ]),
  );
  println(io.stdout, "\nThe original store can open the file now; this package's store converts it again when it opens it.");
  return 0;
}
