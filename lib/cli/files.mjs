// A database is more than its file: SQLite keeps a -wal, -shm or -journal beside it (beside
// the file a symlink points to), and after a killed writer the -wal may hold committed
// transactions that exist nowhere else. These helpers name that set of files, tell
// whether a path the command is about to write is one of them, and read their sizes.

import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The suffixes of the files SQLite keeps for a database (the database itself first). */
export const SET_SUFFIXES = ['', '-wal', '-shm', '-journal'];

/** What each suffix is, for messages. */
const ROLE = { '': 'the database itself', '-wal': "the database's -wal file", '-shm': "the database's -shm file", '-journal': "the database's -journal file" };

/** `path` with symlinks resolved (its directory, when the file does not exist yet). */
export function canonical(path) {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** Device and inode of an existing file (through symlinks), or null. */
function identity(path) {
  try {
    const info = statSync(path, { bigint: true });
    return `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/**
 * The names the file of `path`'s set with `suffix` may have for SQLite: as given and with
 * symlinks resolved, the suffix put on the link's name or on its target's.
 */
function names(path, suffix) {
  const member = `${path}${suffix}`;
  return [...new Set([resolve(member), canonical(member), `${resolve(path)}${suffix}`, `${canonical(path)}${suffix}`])];
}

/**
 * Why writing `out` — or SQLite writing the files it keeps beside `out` — would write the
 * database `db` or a file of its set: a sentence, or null when it would not. Compared by
 * name (symlinks resolved) and by identity (device and inode: hard links, bind mounts).
 */
export function touchesDatabase(db, out) {
  const targets = [];
  for (const suffix of SET_SUFFIXES) {
    for (const name of names(db, suffix)) targets.push({ name, id: identity(name), role: ROLE[suffix] });
  }
  for (const outSuffix of SET_SUFFIXES) {
    for (const name of names(out, outSuffix)) {
      const id = identity(name);
      const hit = targets.find((t) => t.name === name || (id !== null && t.id === id));
      if (hit) return outSuffix === '' ? `is ${hit.role}` : `its ${outSuffix} file would be ${hit.role}`;
    }
  }
  return null;
}

/** The -wal beside the file SQLite opens for `path`. */
export function walPath(path) {
  return `${canonical(path)}-wal`;
}

/** Size of a file in bytes, or null when there is none. */
export function fileSize(path) {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** The first `length` bytes of a file. */
export function readHead(path, length) {
  const head = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, length, 0);
  } finally {
    closeSync(fd);
  }
  return head;
}

/** Size in bytes of the file SQLite keeps beside the database with `suffix`; 0 when there is none. */
const besideBytes = (path, suffix) => fileSize(`${canonical(path)}${suffix}`) ?? 0;

/** Size of the database's -wal file in bytes; 0 when there is none. */
export const walBytes = (path) => besideBytes(path, '-wal');

/** Size of the database's -journal file in bytes (a rollback journal: a transaction was under way); 0 when there is none. */
export const journalBytes = (path) => besideBytes(path, '-journal');

/** A -wal this size or smaller has no frame (its header alone is 32 bytes). */
export const WAL_HEADER_BYTES = 32;
