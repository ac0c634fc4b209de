'use strict';
// store.db and Database: better-sqlite3 12's API on the native connection.

const { existsSync } = require('node:fs');
const { dirname } = require('node:path');

const native = require('../native.cjs');
const backupMethods = require('./backup.cjs');
const { callbackMethods } = require('./functions.cjs');
const { SqliteError } = require('../errors.cjs');
const { defaultSafeIntegers, setDefaultSafeIntegers } = require('./connection-state.cjs');
const {
  RowMode,
  SAFE_INTEGERS,
  TxKind,
  CallKind,
  LAST_ROWID,
  LAST_ROWID_BITS,
  BUSY,
  CALLBACKS,
  decode,
  callKey,
  unpackStatement,
} = require('../protocol.cjs');
const { loneValue, rowResult } = require('./rows.cjs');
const { namedBinder } = require('./binding.cjs');
// The checks, their order and their messages are better-sqlite3's (lib/*.js and the
// C++ Statement/Database classes); statements stay prepared in Rust, addressed by id.

const { FLAT, PLUCK, EXPAND, RAW } = RowMode;
/** A statement's `#mode`: its row mode, plus SAFE_INTEGERS when INTEGER values read as BigInt. */
const SAFE = SAFE_INTEGERS;
const BASE_MODE = SAFE - 1;
const kNative = Symbol('native');
const kBusy = Symbol('busy');
const kCreate = Symbol('create');
const BUSY_STMT = 'This statement is busy executing a query';
const BUSY_DB = 'This database connection is busy executing a query';
const NOT_OPEN = 'The database connection is not open';

/** Finalizes a Rust statement once nothing in JS can reach it any more. */
// The held value keeps the connection object alive until the callback ran, so its handle
// cannot have been reused by another connection meanwhile.
const statementRegistry = new FinalizationRegistry(({ n, id }) => native.facadeFinalize(n.handle, id));

// Statement reuse. `db.prepare(sql)` per call (what hub/store-adapter.mjs does) used to
// leave one Rust statement per call alive until V8 collected its JS object and then ran
// the FinalizationRegistry callback, which only happens when the event loop turns: a loop
// that awaits only promises grew without bound. Now Statements of the same source text
// share one prepared Rust statement (run/get/all/columns bind, step and reset it within
// one call, so sharing is invisible), looked up by source in a per-connection Map of at
// most SHARED_MAX entries (oldest evicted first). A statement that holds state across
// calls — bind() (permanent parameters) or iterate() (an open cursor) — first gets a
// statement of its own. A shared statement is finalized once it is evicted and no
// Statement refers to it.
const SHARED_MAX = 256;

/**
 * The numbers a statement call leaves beside its result, read right after it (the result
 * slots): `lastInsertRowid` of run(), as a number and as the 64 bits of an integer (read
 * through a BigInt64Array view of the same memory); BUSY, the handle + 1 of the
 * connection whose `verbose` logger is running (else 0); CALLBACKS, how many user
 * callbacks are registered on this thread (when not 0, one may be running).
 */
let slots = null;
let slotBits = null;
native.onLoad(() => {
  slots = native.resultSlots();
  slotBits = new BigInt64Array(slots.buffer, slots.byteOffset, slots.length);
});
const sharedByConnection = new WeakMap();

/**
 * better-sqlite3's refusal, for what JS answers without a native call (the row-mode
 * and safe-integer setters; a reused prepare checks the same), while connection `h` runs its `verbose` logger or one of its
 * user callbacks (asked of the native side only when some callback is registered).
 */
function refuseWhileBusy(h) {
  if (slots[BUSY] === h + 1) throw new TypeError(BUSY_DB);
  if (slots[CALLBACKS] !== 0) native.facadeCheckIdle(h);
}

function sharedStatement(n, source) {
  let cache = sharedByConnection.get(n);
  if (cache === undefined) sharedByConnection.set(n, (cache = new Map()));
  if (slots[BUSY] === n.handle + 1) throw new TypeError(BUSY_DB);
  const hit = cache.get(source);
  // A closed connection prepares nothing: the native call throws better-sqlite3's error.
  if (hit !== undefined && n.open) {
    if (slots[CALLBACKS] !== 0) native.facadeCheckIdle(n.handle);
    return hit;
  }
  const entry = unpackStatement(native.facadePrepare(n.handle, source));
  statementRegistry.register(entry, { n, id: entry.id });
  if (cache.size >= SHARED_MAX) cache.delete(cache.keys().next().value);
  cache.set(source, entry);
  return entry;
}

/**
 * Drops connection `n`'s shared statements (those in use stay theirs): after a new
 * function, aggregate or table module, better-sqlite3's fresh prepare of a text may bind
 * another registration (SQLite keeps `f` of each argument count, and expires statements
 * only when one with the same count is replaced).
 */
function forgetSharedStatements(n) {
  sharedByConnection.get(n)?.clear();
}

function booleanArg(args) {
  if (args.length === 0) return true;
  if (typeof args[0] !== 'boolean') throw new TypeError('Expected first argument to be a boolean');
  return args[0];
}

/** better-sqlite3's answer to a method called on an object that is not its own kind. */
function illegalInvocation() {
  return new TypeError('Illegal invocation');
}

/** Sets a statement's mirror of its open iterator (Statement's static block). */
let followIteration;

class Statement {
  #n;
  #h;
  #id;
  /** The shared statement (kept referenced while this object lives), or null once private. */
  #shared;
  /** The shared statement's entry, kept for what it knows of the SQL (its named-parameter binder). */
  #entry;
  #reader;
  #mode = FLAT;
  /** The native calls' first argument: connection, statement and `#mode` (`callKey`). */
  #key;
  #bound = false;
  /**
   * An iterator is open over this statement: a mirror of the Rust statement's state
   * (src/engine/connection/busy.rs), set only from native answers, for the JS-only checks and `busy`.
   */
  #locked = false;

  constructor(token, n, db, source, shared) {
    if (token !== kCreate) throw new TypeError('Statements can only be constructed by the db.prepare() method');
    const { id, reader, readonly } = shared;
    this.#n = n;
    this.#h = n.handle;
    this.#id = id;
    this.#shared = shared;
    this.#entry = shared;
    this.#reader = reader;
    if (defaultSafeIntegers(n)) this.#mode = SAFE;
    this.#key = callKey(this.#h, id, this.#mode);
    // better-sqlite3's own properties, in its order: `busy` (a plain writable one, as its
    // native data property reads), then four read-only ones on an extensible object.
    this.busy = false;
    native.facadeStatementTraits(this, reader, readonly, source, db);
  }

  static {
    followIteration = (statement, locked) => statement.#follow(locked);
  }

  static is(value) {
    return typeof value === 'object' && value !== null && #id in value;
  }

  /** Follows the Rust statement into or out of iterating; `busy` with it, unless the caller wrote their own. */
  #follow(locked) {
    this.#locked = locked;
    if (this.busy === !locked) Reflect.set(this, 'busy', locked);
  }

  /** Gives this statement a Rust statement of its own (before bind() or iterate()). */
  #ownStatement() {
    if (this.#shared === null) return;
    const { id } = unpackStatement(native.facadePrepare(this.#h, this.source));
    this.#id = id;
    this.#key = callKey(this.#h, id, this.#mode);
    this.#shared = null;
    statementRegistry.register(this, { n: this.#n, id });
  }

  /** The binder of a call of `kind` whose only argument is `arg`, or null (see binding.cjs). */
  #binder(kind, arg) {
    return this.#bound ? null : namedBinder(this.#entry, this.#h, this.#id, kind, arg);
  }

  run(...params) {
    if (!Statement.is(this)) throw illegalInvocation();
    const bind = params.length === 1 ? this.#binder(CallKind.WRITE, params[0]) : null;
    const changes = bind === null
      ? native.facadeRun(this.#key, ...params)
      : bind(native.facadeRun, this.#key, params[0]);
    return { changes, lastInsertRowid: this.#mode < SAFE ? slots[LAST_ROWID] : slotBits[LAST_ROWID_BITS] };
  }

  get(...params) {
    if (!Statement.is(this)) throw illegalInvocation();
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    const bind = params.length === 1 ? this.#binder(CallKind.READ, params[0]) : null;
    const out = bind === null
      ? native.facadeGet(this.#key, ...params)
      : bind(native.facadeGet, this.#key, params[0]);
    return this.#plucks() ? loneValue(out) : rowResult(out);
  }

  all(...params) {
    if (!Statement.is(this)) throw illegalInvocation();
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    const bind = params.length === 1 ? this.#binder(CallKind.READ, params[0]) : null;
    return bind === null
      ? native.facadeAll(this.#key, ...params)
      : bind(native.facadeAll, this.#key, params[0]);
  }

  iterate(...params) {
    if (!Statement.is(this)) throw illegalInvocation();
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    this.#ownStatement();
    // Rust refuses a busy connection, then this statement while iterated, then binds.
    const bind = params.length === 1 ? this.#binder(CallKind.ITERATE, params[0]) : null;
    if (bind === null) native.facadeIterStart(this.#key, params);
    else bind(iterStart, this.#key, params[0]);
    this.#follow(true);
    return new StatementIterator(kCreate, this, this.#h, this.#id, this.#key, this.#plucks());
  }

  bind(...params) {
    if (!Statement.is(this)) throw illegalInvocation();
    if (this.#bound) throw new TypeError('The bind() method can only be invoked once per statement object');
    this.#ownStatement();
    native.facadeBind(this.#h, this.#id, params);
    this.#bound = true;
    return this;
  }

  pluck(...args) {
    if (!Statement.is(this)) throw illegalInvocation();
    return this.#setMode('pluck', PLUCK, args);
  }

  expand(...args) {
    if (!Statement.is(this)) throw illegalInvocation();
    return this.#setMode('expand', EXPAND, args);
  }

  raw(...args) {
    if (!Statement.is(this)) throw illegalInvocation();
    return this.#setMode('raw', RAW, args);
  }

  safeIntegers(...args) {
    if (!Statement.is(this)) throw illegalInvocation();
    refuseWhileBusy(this.#h);
    if (this.#locked) throw new TypeError(BUSY_STMT);
    this.#setModeBits((this.#mode & BASE_MODE) | (booleanArg(args) ? SAFE : 0));
    return this;
  }

  columns() {
    if (!Statement.is(this)) throw illegalInvocation();
    if (!this.#reader) throw new TypeError('The columns() method is only for statements that return data');
    return decode(native.facadeColumns(this.#h, this.#id));
  }

  #setMode(name, mode, args) {
    if (!this.#reader) throw new TypeError(`The ${name}() method is only for statements that return data`);
    refuseWhileBusy(this.#h);
    if (this.#locked) throw new TypeError(BUSY_STMT);
    const use = booleanArg(args);
    const current = this.#mode & BASE_MODE;
    this.#setModeBits((use ? mode : current === mode ? FLAT : current) | (this.#mode & SAFE));
    return this;
  }

  /** Whether its rows are plucked: they cross as their value alone, with no form. */
  #plucks() {
    return (this.#mode & BASE_MODE) === PLUCK;
  }

  #setModeBits(mode) {
    this.#mode = mode;
    this.#key = callKey(this.#h, this.#id, mode);
  }
}

/** `facadeIterStart` with the values of a named-parameter object (binding.cjs) as its arguments. */
function iterStart(key, ...values) {
  native.facadeIterStart(key, values);
}

const done = () => ({ value: undefined, done: true });

/** What `stmt.iterate()` returns (better-sqlite3's StatementIterator). */
class StatementIterator {
  #statement;
  #h;
  #id;
  /** The statement's call key (`callKey`): its row mode and safe-integer bit with it. */
  #key;
  /** Whether its rows are plucked (a statement's mode cannot change while it iterates). */
  #plucks;
  /** Open: the Rust statement iterates for this iterator (src/engine/connection/busy.rs). */
  #alive = true;

  constructor(token, statement, h, id, key, plucks) {
    if (token !== kCreate) throw new TypeError('Disabled constructor');
    this.#statement = statement;
    this.#h = h;
    this.#id = id;
    this.#key = key;
    this.#plucks = plucks;
    native.facadeIteratorTraits(this, statement);
  }

  static is(value) {
    return typeof value === 'object' && value !== null && #alive in value;
  }

  next() {
    if (!StatementIterator.is(this)) throw illegalInvocation();
    if (!this.#alive) {
      // better-sqlite3 refuses even a finished iterator while its connection is busy.
      refuseWhileBusy(this.#h);
      return done();
    }
    let out;
    try {
      out = native.facadeIterNext(this.#key);
    } catch (error) {
      // A refusal (busy) leaves the iterator open; an error while stepping ended it.
      if (!native.facadeIterating(this.#h, this.#id)) this.#end();
      throw error;
    }
    // No row value is undefined: that is the end.
    if (out === undefined) {
      this.#end();
      return done();
    }
    return { value: this.#plucks ? loneValue(out) : rowResult(out), done: false };
  }

  return() {
    if (!StatementIterator.is(this)) throw illegalInvocation();
    if (this.#alive) {
      native.facadeIterReturn(this.#h, this.#id);
      this.#end();
    } else {
      refuseWhileBusy(this.#h);
    }
    return done();
  }

  [Symbol.iterator]() {
    if (!StatementIterator.is(this)) throw illegalInvocation();
    return this;
  }

  #end() {
    this.#alive = false;
    followIteration(this.#statement, false);
  }
}

/**
 * Gives a class better-sqlite3's prototype layout: its methods enumerable, as V8's
 * templates make them, and `constructor` after them: a function that refuses to construct
 * anything, whether called or constructed, with this prototype.
 */
function asTemplate(Class, Constructor) {
  const proto = Class.prototype;
  for (const key of Reflect.ownKeys(proto)) {
    if (key !== 'constructor') Object.defineProperty(proto, key, { enumerable: true });
  }
  delete proto.constructor;
  Object.defineProperty(proto, 'constructor', { value: Constructor, writable: true, configurable: true });
  Constructor.prototype = proto;
}
asTemplate(Statement, function Statement() {
  throw new TypeError('Statements can only be constructed by the db.prepare() method');
});
asTemplate(StatementIterator, function StatementIterator() {
  throw new TypeError('Disabled constructor');
});
// V8 names a template's symbol-keyed method '' (a class method is '[Symbol.iterator]').
Object.defineProperty(StatementIterator.prototype[Symbol.iterator], 'name', { value: '' });

const transactionsReady = new WeakSet();

function wrapTransaction(fn, n, mode) {
  const { apply } = Function.prototype;
  const h = n.handle;
  return function sqliteTransaction() {
    const nested = native.txBegin(h, mode);
    try {
      const result = apply.call(fn, this, arguments);
      if (result && typeof result.then === 'function') {
        throw new TypeError('Transaction function cannot return a promise');
      }
      native.txCommit(h, nested);
      return result;
    } catch (ex) {
      if (n.inTransaction) native.txRollback(h, nested);
      throw ex;
    }
  };
}

function initDatabase(db, n, givenName, isMemory, isReadonly) {
  Object.defineProperties(db, {
    [kNative]: { value: n },
    name: { get: function name() { return givenName; }, enumerable: true },
    open: { get: function open() { return n.open; }, enumerable: true },
    inTransaction: { get: function inTransaction() { return n.inTransaction; }, enumerable: true },
    readonly: { get: function readonly() { return isReadonly; }, enumerable: true },
    memory: { get: function memory() { return isMemory; }, enumerable: true },
  });
  return db;
}

/**
 * better-sqlite3's `Database`, on a native connection: a file, `:memory:`/`""`, or the
 * bytes of `serialize()` (an in-memory database); options as better-sqlite3's
 * (`nativeBinding` is checked and ignored: the binding is this package's own), plus
 * `immutable` (see docs/better-sqlite3-api.md).
 */
function Database(filenameGiven, options) {
  if (new.target == null) return new Database(filenameGiven, options);
  native.load(); // throws the descriptive error when the binary is missing
  let buffer;
  if (Buffer.isBuffer(filenameGiven)) {
    buffer = filenameGiven;
    filenameGiven = ':memory:';
  }
  if (filenameGiven == null) filenameGiven = '';
  if (options == null) options = {};
  if (typeof filenameGiven !== 'string') throw new TypeError('Expected first argument to be a string');
  if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
  if ('readOnly' in options) throw new TypeError('Misspelled option "readOnly" should be "readonly"');
  if ('memory' in options) throw new TypeError('Option "memory" was removed in v7.0.0 (use ":memory:" filename instead)');
  const filename = filenameGiven.trim();
  const anonymous = filename === '' || filename === ':memory:';
  const readonly = getBooleanOption(options, 'readonly');
  // This package's addition: SQLite's immutable open, for a file that cannot be locked.
  const immutable = getBooleanOption(options, 'immutable');
  const fileMustExist = getBooleanOption(options, 'fileMustExist');
  const timeout = 'timeout' in options ? options.timeout : 5000;
  const verbose = 'verbose' in options ? options.verbose : null;
  const nativeBinding = 'nativeBinding' in options ? options.nativeBinding : null;
  if (readonly && anonymous && !buffer) throw new TypeError('In-memory/temporary databases cannot be readonly');
  if (immutable && !readonly) throw new TypeError('The "immutable" option requires "readonly"');
  if (!Number.isInteger(timeout) || timeout < 0) throw new TypeError('Expected the "timeout" option to be a positive integer');
  if (timeout > 0x7fffffff) throw new RangeError('Option "timeout" cannot be greater than 2147483647');
  if (verbose != null && typeof verbose !== 'function') throw new TypeError('Expected the "verbose" option to be a function');
  if (nativeBinding != null && typeof nativeBinding !== 'string' && typeof nativeBinding !== 'object') {
    throw new TypeError('Expected the "nativeBinding" option to be a string or addon object');
  }
  if (!anonymous && !filename.startsWith('file:') && !existsSync(dirname(filename))) {
    throw new TypeError('Cannot open database because the directory does not exist');
  }
  const n = native.connect(filename, { readonly, fileMustExist, timeout, immutable });
  if (buffer) {
    try {
      native.facadeDeserialize(n.handle, buffer, readonly);
    } catch (error) {
      n.close();
      throw error;
    }
  }
  if (verbose) native.facadeSetLogger(n.handle, verbose);
  initDatabase(this, n, filenameGiven, anonymous, readonly);
}

function getBooleanOption(options, key) {
  let value = false;
  if (key in options && typeof (value = options[key]) !== 'boolean') {
    throw new TypeError(`Expected the "${key}" option to be a boolean`);
  }
  return value;
}

/**
 * `store.db`: a Database object on the store's own connection. `busy()` says a store
 * method is running (closing is refused then).
 */
function createDbFacade(n, name, busy) {
  const anonymous = name.trim() === '' || name.trim() === ':memory:';
  const db = initDatabase(Object.create(Database.prototype), n, name, anonymous, false);
  return Object.defineProperty(db, kBusy, { value: busy });
}

Object.assign(Database.prototype, {
  prepare(source) {
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    const n = this[kNative];
    return new Statement(kCreate, n, this, source, sharedStatement(n, source));
  },

  exec(source) {
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    native.facadeExec(this[kNative].handle, source);
    return this;
  },

  pragma(source, options) {
    if (options == null) options = {};
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
    const simple = getBooleanOption(options, 'simple');
    const n = this[kNative];
    // better-sqlite3 runs it as a statement, which takes the database's safe-integer default.
    const out = native.facadePragma(n.handle, `PRAGMA ${source}`, simple, defaultSafeIntegers(n));
    // A simple pragma's value is a one-row result; the rows of any other are whole.
    return simple ? loneValue(out) : out;
  },

  transaction(fn) {
    if (typeof fn !== 'function') throw new TypeError('Expected first argument to be a function');
    const n = this[kNative];
    if (!transactionsReady.has(n)) {
      if (!n.open) throw new TypeError(NOT_OPEN);
      transactionsReady.add(n);
    }
    const properties = {
      default: { value: wrapTransaction(fn, n, TxKind.BEGIN) },
      deferred: { value: wrapTransaction(fn, n, TxKind.DEFERRED) },
      immediate: { value: wrapTransaction(fn, n, TxKind.IMMEDIATE) },
      exclusive: { value: wrapTransaction(fn, n, TxKind.EXCLUSIVE) },
      database: { value: this, enumerable: true },
    };
    Object.defineProperties(properties.default.value, properties);
    Object.defineProperties(properties.deferred.value, properties);
    Object.defineProperties(properties.immediate.value, properties);
    Object.defineProperties(properties.exclusive.value, properties);
    return properties.default.value;
  },

  close() {
    if (this[kBusy]?.()) throw new TypeError(BUSY_DB);
    this[kNative].close();
    return this;
  },

  defaultSafeIntegers(...args) {
    setDefaultSafeIntegers(this[kNative], booleanArg(args));
    return this;
  },

  unsafeMode(...args) {
    const on = booleanArg(args);
    const n = this[kNative];
    if (n.open) native.facadeUnsafeMode(n.handle, on);
    return this;
  },

  ...callbackMethods((db) => db[kNative], forgetSharedStatements),
  backup: backupMethods.backupOf((db) => db[kNative]),
  serialize(options) {
    return backupMethods.serialize(this[kNative], options);
  },
  loadExtension(...args) {
    if (typeof args[0] !== 'string') throw new TypeError('Expected first argument to be a string');
    if (args.length > 1 && typeof args[1] !== 'string') throw new TypeError('Expected second argument to be a string');
    native.facadeLoadExtension(this[kNative].handle, args[0], args.length > 1 ? args[1] : undefined);
    return this;
  },

  [Symbol.for('nodejs.util.inspect.custom')]: function inspect(depth, opts) {
    return Object.assign(new DatabaseInspection(), this);
  },
});

// better-sqlite3's order of its prototype's methods (lib/database.js).
for (const key of ['prepare', 'transaction', 'pragma', 'backup', 'serialize', 'function', 'aggregate', 'table', 'loadExtension', 'exec', 'close', 'defaultSafeIntegers', 'unsafeMode']) {
  const method = Database.prototype[key];
  delete Database.prototype[key];
  Database.prototype[key] = method;
}

const DatabaseInspection = function Database() {};
Database.SqliteError = SqliteError;

module.exports = { Database, createDbFacade };
