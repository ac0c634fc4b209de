'use strict';
// The package's entries: one per hub release, by the schema version its store writes.
// The root entry (and `/v6`) is schema "6", `/v7` and `/v8` the later ones. They differ
// only in `createStore`; everything else is one module shared by all three.
//
// The pieces live beside this file: native.cjs loads the binary, protocol.cjs defines the
// wire to it, errors.cjs the SqliteError class, database.cjs store.db and Database,
// store/ the store object, stats.cjs the statistics of a hub file read from outside the hub.

const native = require('./native.cjs');
const { SqliteError } = require('./errors.cjs');
const { Database } = require('./database/database.cjs');
const { checkpointStatus, storeOfVersion, uuidv7 } = require('./store/index.cjs');
const { readStats } = require('./store/file-stats.cjs');

/** The hub's store-adapter asks for better-sqlite3's class; this package's stands in. */
async function importBetterSqlite3() {
  native.load(); // rejects, like a failed import('better-sqlite3'), without the binary
  return Database;
}

/** This package's version, its SQLite's and where its binary came from. */
function version() {
  const { binary, target } = native.loadedInfo();
  const db = new Database(':memory:');
  try {
    return { version: native.VERSION, sqlite: db.prepare('SELECT sqlite_version()').pluck().get(), target, binary };
  } finally {
    db.close();
  }
}

/** The exports of the entry for schema `schemaVersion` (6, 7 or 8). */
function entryOf(schemaVersion) {
  const createStore = storeOfVersion(schemaVersion);
  return { createStore, uuidv7, importBetterSqlite3, version, readStats, checkpointStatus, Database, SqliteError };
}

module.exports = { entryOf };
