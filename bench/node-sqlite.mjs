// The benchmarks' third store: the original's statements on Node's built-in `node:sqlite`
// (Node 22.5 and later), through the part of better-sqlite3's API the baseline uses. It is
// the comparison a hub maintainer asks for ("why not node:sqlite?"), not a product: each
// call does what better-sqlite3's would, in JavaScript over DatabaseSync.
//
// What differs from better-sqlite3 and is bridged here: `undefined` binds as NULL (node:sqlite
// refuses it), an array argument is spread, keys of a named row that the statement does not
// use are ignored, `pluck()` returns the first column, `raw()` is `setReturnArrays()` (the
// rows' values where a Node has no such method), `safeIntegers()` is `setReadBigInts()`,
// and `transaction(fn)` is BEGIN/COMMIT with savepoints when nested.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** node:sqlite's module, or null on a Node that has none (Node 20). */
export function nodeSqlite() {
  try {
    // Node 22 prints an ExperimentalWarning for it; the benchmark's output stays clean.
    const { emitWarning } = process;
    process.emitWarning = () => {};
    try {
      return require('node:sqlite');
    } finally {
      process.emitWarning = emitWarning;
    }
  } catch {
    return null;
  }
}

const bindable = (v) => (v === undefined ? null : v);

/** better-sqlite3's argument rules that the baseline relies on, for node:sqlite. */
function bindArgs(args) {
  if (args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0]) && !ArrayBuffer.isView(args[0])) {
    const named = {};
    for (const key of Object.keys(args[0])) named[key] = bindable(args[0][key]);
    return [named];
  }
  return args.flat().map(bindable);
}

class Statement {
  #stmt;
  #pluck = false;
  /** `raw()` without node:sqlite's own arrays: each row's values. */
  #rawByValues = false;

  constructor(stmt) {
    // better-sqlite3 ignores keys of a named row that the statement does not use.
    stmt.setAllowUnknownNamedParameters?.(true);
    this.#stmt = stmt;
  }

  pluck(on = true) {
    this.#pluck = on;
    return this;
  }

  raw(on = true) {
    if (typeof this.#stmt.setReturnArrays === 'function') this.#stmt.setReturnArrays(on);
    else this.#rawByValues = on;
    return this;
  }

  safeIntegers(on = true) {
    this.#stmt.setReadBigInts(on);
    return this;
  }

  run(...args) {
    const { changes, lastInsertRowid } = this.#stmt.run(...bindArgs(args));
    return { changes: Number(changes), lastInsertRowid };
  }

  get(...args) {
    const row = this.#stmt.get(...bindArgs(args));
    if (row !== undefined && this.#rawByValues) return Object.values(row);
    if (row === undefined || !this.#pluck) return row;
    for (const key in row) return row[key];
    return undefined;
  }

  all(...args) {
    const rows = this.#stmt.all(...bindArgs(args));
    if (this.#rawByValues) return rows.map((row) => Object.values(row));
    if (!this.#pluck) return rows;
    return rows.map((row) => {
      for (const key in row) return row[key];
      return undefined;
    });
  }
}

/** A better-sqlite3-shaped Database on node:sqlite's DatabaseSync. */
export function nodeSqliteDatabase() {
  const sqlite = nodeSqlite();
  if (!sqlite) return null;
  const { DatabaseSync } = sqlite;

  return class Database {
    #db;
    #depth = 0;

    constructor(path) {
      this.#db = new DatabaseSync(path);
    }

    get inTransaction() {
      return this.#db.isTransaction ?? this.#depth > 0;
    }

    prepare(sql) {
      return new Statement(this.#db.prepare(sql));
    }

    exec(sql) {
      this.#db.exec(sql);
      return this;
    }

    /** `db.pragma('x = y')` and `db.pragma('x', { simple: true })`. */
    pragma(text, { simple = false } = {}) {
      const rows = this.#db.prepare(`PRAGMA ${text}`).all();
      if (!simple) return rows;
      for (const key in rows[0] ?? {}) return rows[0][key];
      return undefined;
    }

    transaction(fn) {
      const begin = (mode) => (...args) => {
        const nested = this.#depth > 0;
        const savepoint = `bench_sp_${this.#depth}`;
        this.#db.exec(nested ? `SAVEPOINT ${savepoint}` : `BEGIN ${mode}`);
        this.#depth++;
        try {
          const result = fn(...args);
          this.#depth--;
          this.#db.exec(nested ? `RELEASE ${savepoint}` : 'COMMIT');
          return result;
        } catch (error) {
          this.#depth--;
          this.#db.exec(nested ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK');
          throw error;
        }
      };
      const run = begin('DEFERRED');
      run.deferred = run;
      run.immediate = begin('IMMEDIATE');
      run.exclusive = begin('EXCLUSIVE');
      return run;
    }

    close() {
      this.#db.close();
    }
  };
}
