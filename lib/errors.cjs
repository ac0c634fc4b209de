'use strict';
// better-sqlite3 12's error class (lib/sqlite-error.js), registered with the native side
// so that SQLite failures thrown from Rust are instances of it.

const native = require('./native.cjs');

const descriptor = { value: 'SqliteError', writable: true, enumerable: false, configurable: true };

/**
 * `SqliteError(message, code)`, callable with or without `new`: an Error (by prototype)
 * whose `message` is an own non-enumerable string, `code` an own string (a SQLite
 * extended result code name), and `name` "SqliteError" on the prototype.
 */
function SqliteError(message, code) {
  if (new.target !== SqliteError) {
    return new SqliteError(message, code);
  }
  if (typeof code !== 'string') {
    throw new TypeError('Expected second argument to be a string');
  }
  Error.call(this, message);
  descriptor.value = '' + message;
  Object.defineProperty(this, 'message', descriptor);
  Error.captureStackTrace(this, SqliteError);
  this.code = code;
}
Object.setPrototypeOf(SqliteError, Error);
Object.setPrototypeOf(SqliteError.prototype, Error.prototype);
Object.defineProperty(SqliteError.prototype, 'name', descriptor);

// Registered when the binary loads (lazily: importing must not need it).
native.onLoad((binding) => binding.registerSqliteError(SqliteError));

module.exports = { SqliteError };
