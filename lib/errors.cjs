'use strict';
// better-sqlite3's error class, registered with the native side so that SQLite failures
// thrown from Rust are instances of it.

const native = require('./native.cjs');
/** better-sqlite3's error class: `name` "SqliteError" on the prototype, own `code`. */
class SqliteError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}
Object.defineProperty(SqliteError.prototype, 'name', { value: 'SqliteError', writable: true, configurable: true });
native.registerSqliteError(SqliteError);

module.exports = { SqliteError };
