'use strict';
// better-sqlite3's module shape on this package's Database: `require(...)` is the class,
// with SqliteError on it, so code written for better-sqlite3 runs unchanged. The class
// alone is loaded, not the stores: every module kept is heap each major GC marks again.
module.exports = require('./lib/database/database.cjs').Database;
