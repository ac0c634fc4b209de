'use strict';
// better-sqlite3's module shape on this package's Database: `require(...)` is the class,
// with SqliteError on it, so code written for better-sqlite3 runs unchanged.
module.exports = require('./index.cjs').Database;
