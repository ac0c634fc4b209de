// `triflux-store info <db>`: what the file is: schema and library versions, sizes, row
// counts per table, journal mode.

import { createRequire } from 'node:module';

import { fileSize, readHead, walPath } from '../files.mjs';
import { ident, openHub, sqlite, storeFor, tableNames } from '../open.mjs';
import { bytes, int, pairs, printJson, println, visible } from '../util.mjs';

const pkg = createRequire(import.meta.url)('../../../package.json');

/** The WAL size the hub's background checkpointer keeps the file under (docs/writes.md). */
export const WAL_BOUND = 64 * 1024 * 1024;

/** "wal" when the file's header marks it a WAL database (read and write versions 2), else "delete". */
function headerJournalMode(path) {
  const header = readHead(path, 20);
  return header[18] === 2 && header[19] === 2 ? 'wal' : 'delete';
}

/** Collects the facts `info` prints (also used by the tests through --json). */
export function collectInfo(path, options, io) {
  const { db, version, immutable } = openHub(path, options, io);
  const store = storeFor(version);
  try {
    return sqlite(path, () => {
      const pragma = (name) => db.pragma(name, { simple: true });
      const tables = {};
      for (const name of tableNames(db)) {
        tables[name] = db.prepare(`SELECT COUNT(*) FROM ${ident(name)}`).pluck().get();
      }
      const pageSize = pragma('page_size');
      const pageCount = pragma('page_count');
      return {
        file: path,
        schema_version: version,
        // The store of the file's hub release (the oldest one for an older file) and its entry.
        store_schema_version: store.version,
        store_entry: store.entry,
        sqlite_version: db.prepare('SELECT sqlite_version()').pluck().get(),
        package: { name: pkg.name, version: pkg.version },
        // An immutable connection ignores WAL mode (it says "delete"): the header says what the file is.
        journal_mode: immutable ? headerJournalMode(path) : pragma('journal_mode'),
        page_size: pageSize,
        page_count: pageCount,
        freelist_count: pragma('freelist_count'),
        file_size: fileSize(path),
        wal_size: fileSize(walPath(path)),
        wal_bound: WAL_BOUND,
        opened: immutable ? 'immutable' : 'read-only',
        tables,
      };
    });
  } finally {
    db.close();
  }
}

export function run({ args, options, io }) {
  const info = collectInfo(args[0], options, io);
  if (options.json) {
    printJson(io.stdout, info);
    return 0;
  }
  const version =
    info.schema_version === info.store_schema_version
      ? `${info.schema_version} (${info.store_entry})`
      : `${info.schema_version} (${info.store_entry} writes ${info.store_schema_version}; the hub migrates the file when it opens it)`;
  println(
    io.stdout,
    pairs([
      ['file', info.file],
      ['schema version', version],
      ['sqlite', info.sqlite_version],
      ['package', `${info.package.name} ${info.package.version}`],
      ['journal mode', info.journal_mode],
      ['page size', bytes(info.page_size)],
      ['pages', `${int(info.page_count)} (${int(info.freelist_count)} free)`],
      ['file size', bytes(info.file_size)],
      ['wal size', info.wal_size == null ? 'no -wal file' : `${bytes(info.wal_size)} (bound ${bytes(info.wal_bound)})`],
    ]),
  );
  if (info.wal_size > info.wal_bound) {
    // The hub's checkpointer restarts the WAL well before this size: a reader that holds
    // a snapshot for long, or checkpoints that fail (a full disk), keep it from doing so.
    println(
      io.stdout,
      `warning: the WAL is over its bound: a long-held read snapshot or failing checkpoints (full disk?) keep it from being reset; the hub reports failed checkpoints on stderr`,
    );
  }
  println(io.stdout);
  const names = Object.keys(info.tables);
  const shown = names.map(visible);
  const width = Math.max(5, ...shown.map((n) => n.length));
  println(io.stdout, `${'table'.padEnd(width)}  rows`);
  names.forEach((name, i) => println(io.stdout, `${shown[i].padEnd(width)}  ${int(info.tables[name])}`));
  return 0;
}
