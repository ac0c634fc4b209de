'use strict';
// triflux-native-store: the JS face of the native store. The pieces live in lib/:
// native.cjs loads the binary, protocol.cjs defines the wire to it, errors.cjs the
// SqliteError class, database.cjs store.db and Database, store.cjs the store object.

const { SqliteError } = require('./lib/errors.cjs');
const { Database } = require('./lib/database.cjs');
const { createStore, uuidv7 } = require('./lib/store.cjs');

/** The hub's store-adapter asks for better-sqlite3's class; this package's stands in. */
async function importBetterSqlite3() {
  return Database;
}

module.exports = { createStore, uuidv7, importBetterSqlite3, Database, SqliteError };
