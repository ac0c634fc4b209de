'use strict';
// db.backup() and db.serialize() on a native connection: better-sqlite3 12's
// lib/methods/backup.js and serialize.js (same checks, order, messages and stepping),
// with native calls (src/engine/backup/) in place of its C++
// Backup object.

const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');

const native = require('../native.cjs');

const fsAccess = promisify(fs.access);

/**
 * `db.backup(filename, { attached, progress })` for Database objects whose native
 * connection `nativeOf(db)` gives: resolves to { totalPages, remainingPages } once the
 * copy is complete.
 */
function backupOf(nativeOf) {
  return async function backup(filename, options) {
    if (options == null) options = {};

    if (typeof filename !== 'string') throw new TypeError('Expected first argument to be a string');
    if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');

    filename = filename.trim();
    const attachedName = 'attached' in options ? options.attached : 'main';
    const handler = 'progress' in options ? options.progress : null;

    if (!filename) throw new TypeError('Backup filename cannot be an empty string');
    if (filename === ':memory:') throw new TypeError('Invalid backup filename ":memory:"');
    if (typeof attachedName !== 'string') throw new TypeError('Expected the "attached" option to be a string');
    if (!attachedName) throw new TypeError('The "attached" option cannot be an empty string');
    if (handler != null && typeof handler !== 'function') throw new TypeError('Expected the "progress" option to be a function');

    await fsAccess(path.dirname(filename)).catch(() => {
      throw new TypeError('Cannot save backup because the directory does not exist');
    });

    const isNewFile = await fsAccess(filename).then(() => false, () => true);
    const n = nativeOf(this);
    return runBackup(n, native.backupStart(n.handle, attachedName, filename, isNewFile), handler || null);
  };
}

/** One step per macrotask: the first copies no page (it reads the page count), then 100 or what the handler returns. */
function runBackup(n, id, handler) {
  let rate = 0;
  let useDefault = true;

  return new Promise((resolve, reject) => {
    setImmediate(function step() {
      try {
        const [totalPages, remainingPages] = native.backupTransfer(n.handle, id, rate);
        const progress = { totalPages, remainingPages };
        if (!progress.remainingPages) {
          native.backupClose(n.handle, id);
          resolve(progress);
          return;
        }
        if (useDefault) {
          useDefault = false;
          rate = 100;
        }
        if (handler) {
          const ret = handler(progress);
          if (ret !== undefined) {
            if (typeof ret === 'number' && ret === ret) rate = Math.max(0, Math.min(0x7fffffff, Math.round(ret)));
            else throw new TypeError('Expected progress callback to return a number or undefined');
          }
        }
        setImmediate(step);
      } catch (err) {
        native.backupClose(n.handle, id);
        reject(err);
      }
    });
  });
}

/** `db.serialize({ attached })`: the database file's bytes as a Buffer. */
function serialize(n, options) {
  if (options == null) options = {};

  if (typeof options !== 'object') throw new TypeError('Expected first argument to be an options object');

  const attachedName = 'attached' in options ? options.attached : 'main';
  if (typeof attachedName !== 'string') throw new TypeError('Expected the "attached" option to be a string');
  if (!attachedName) throw new TypeError('The "attached" option cannot be an empty string');

  return native.serialize(n.handle, attachedName);
}

module.exports = { backupOf, serialize };
