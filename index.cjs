'use strict';
// triflux-native-store: the JS face of the native store. The pieces live in lib/:
// native.cjs loads the binary, protocol.cjs defines the wire to it, errors.cjs the
// SqliteError class, database.cjs store.db and Database, store/ the store object,
// stats.cjs the statistics of a hub file read from outside the hub.

const native = require('./lib/native.cjs');
const { SqliteError } = require('./lib/errors.cjs');
const { Database } = require('./lib/database.cjs');
const { createStore, uuidv7, checkpointStatus } = require('./lib/store/index.cjs');
const { readStats } = require('./lib/stats.cjs');

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

module.exports = { createStore, uuidv7, importBetterSqlite3, version, readStats, checkpointStatus, Database, SqliteError };
