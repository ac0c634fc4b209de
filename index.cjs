'use strict';
// triflux-native-store: the JS face of the native store. This file only shapes the
// public object: it applies the original's parameter destructuring (same defaults,
// same V8 errors), JSON.stringify of caller values, JSON.parse of the rows Rust
// writes, and the assign-status listeners. Every statement and rule lives in Rust.

const { existsSync, mkdirSync } = require('node:fs');
const { dirname, join } = require('node:path');

const native = loadNative();

/** better-sqlite3's error class: `name` "SqliteError" on the prototype, own `code`. */
class SqliteError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}
Object.defineProperty(SqliteError.prototype, 'name', { value: 'SqliteError', writable: true, configurable: true });
native.registerSqliteError(SqliteError);

const MARKER = '\u0000tfx';

/** Rows arrive as JSON text; a leading U+0001 means marker objects (NaN, BLOBs) inside. */
function decode(text) {
  return text.charCodeAt(0) === 1 ? JSON.parse(text.slice(1), revive) : JSON.parse(text);
}

function revive(_key, value) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value[MARKER] === 'string') {
    if (value[MARKER] === 'NaN') return NaN;
    if (value[MARKER] === 'blob') return Buffer.from(value.data, 'base64');
  }
  return value;
}

// --- store.db and Database: better-sqlite3 12's API on the native connection ---
// The checks, their order and their messages are better-sqlite3's (lib/*.js and the
// C++ Statement/Database classes); statements stay prepared in Rust, addressed by id.

const FLAT = 0;
const PLUCK = 1;
const EXPAND = 2;
const RAW = 3;
const kNative = Symbol('native');
const kCreate = Symbol('create');
const BUSY_STMT = 'This statement is busy executing a query';
const NOT_OPEN = 'The database connection is not open';

const notSupported = (what) => new TypeError(`${what} is not supported by triflux-native-store`);

/** run() writes lastInsertRowid here (cheaper than building the result object in Rust). */
const runShared = new Float64Array(1);

/** Finalizes the Rust statement once its JS object is collected. */
const statementRegistry = new FinalizationRegistry(({ n, id }) => n.facadeFinalize(id));

function booleanArg(args) {
  if (args.length === 0) return true;
  if (typeof args[0] !== 'boolean') throw new TypeError('Expected first argument to be a boolean');
  return args[0];
}

class Statement {
  #n;
  #h;
  #id;
  #reader;
  #mode = FLAT;
  #bound = false;
  #locked = false;

  constructor(token, n, db, source, packed) {
    if (token !== kCreate) throw new TypeError('Statements can only be constructed by the db.prepare() method');
    const id = Math.floor(packed / 4);
    this.#n = n;
    this.#h = n.handle;
    this.#id = id;
    this.#reader = (packed & 2) !== 0;
    // Own read-only data properties, like better-sqlite3's (Object.freeze is far cheaper
    // than defineProperties; `busy` is a prototype getter).
    this.reader = this.#reader;
    this.readonly = (packed & 1) !== 0;
    this.source = source;
    this.database = db;
    Object.freeze(this);
    statementRegistry.register(this, { n, id });
  }

  run(...params) {
    if (this.#locked) throw new TypeError(BUSY_STMT);
    const changes = native.facadeRun(this.#h, this.#id, params);
    return { changes, lastInsertRowid: runShared[0] };
  }

  get(...params) {
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    if (this.#locked) throw new TypeError(BUSY_STMT);
    const mode = this.#mode;
    const out = native.facadeGet(this.#h, this.#id, mode, params);
    return typeof out === 'string' && mode !== PLUCK ? decode(out) : out;
  }

  all(...params) {
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    if (this.#locked) throw new TypeError(BUSY_STMT);
    return decode(native.facadeAll(this.#h, this.#id, this.#mode, params));
  }

  iterate(...params) {
    if (!this.#reader) throw new TypeError('This statement does not return data. Use run() instead');
    if (this.#locked) throw new TypeError(BUSY_STMT);
    const n = this.#n;
    const id = this.#id;
    const mode = this.#mode;
    n.facadeIterStart(id, params);
    this.#locked = true;
    let alive = true;
    const end = () => {
      alive = false;
      this.#locked = false;
    };
    const done = () => ({ value: undefined, done: true });
    return Object.assign(Object.create(StatementIterator.prototype), {
      next() {
        if (!alive) return done();
        let text;
        try {
          text = n.facadeIterNext(id, mode);
        } catch (error) {
          end();
          throw error;
        }
        if (text === '') {
          end();
          return done();
        }
        return { value: decode(text), done: false };
      },
      return() {
        if (alive) {
          n.facadeIterReturn(id);
          end();
        }
        return done();
      },
      [Symbol.iterator]() {
        return this;
      },
    });
  }

  bind(...params) {
    if (this.#bound) throw new TypeError('The bind() method can only be invoked once per statement object');
    if (this.#locked) throw new TypeError(BUSY_STMT);
    this.#n.facadeBind(this.#id, params);
    this.#bound = true;
    return this;
  }

  pluck(...args) {
    return this.#setMode('pluck', PLUCK, args);
  }

  expand(...args) {
    return this.#setMode('expand', EXPAND, args);
  }

  raw(...args) {
    return this.#setMode('raw', RAW, args);
  }

  #setMode(name, mode, args) {
    if (!this.#reader) throw new TypeError(`The ${name}() method is only for statements that return data`);
    if (this.#locked) throw new TypeError(BUSY_STMT);
    const use = booleanArg(args);
    this.#mode = use ? mode : this.#mode === mode ? FLAT : this.#mode;
    return this;
  }

  columns() {
    if (!this.#reader) throw new TypeError('The columns() method is only for statements that return data');
    return decode(this.#n.facadeColumns(this.#id));
  }

  get busy() {
    return this.#locked;
  }

  safeIntegers(...args) {
    if (this.#locked) throw new TypeError(BUSY_STMT);
    if (booleanArg(args)) throw notSupported('stmt.safeIntegers()');
    return this;
  }

}

/** Iterators returned by `stmt.iterate()` (better-sqlite3 calls the class StatementIterator). */
function StatementIterator() {
  throw new TypeError('Disabled constructor');
}

const transactionsReady = new WeakSet();

function wrapTransaction(fn, n, mode) {
  const { apply } = Function.prototype;
  return function sqliteTransaction() {
    const nested = n.txBegin(mode);
    try {
      const result = apply.call(fn, this, arguments);
      if (result && typeof result.then === 'function') {
        throw new TypeError('Transaction function cannot return a promise');
      }
      n.txCommit(nested);
      return result;
    } catch (ex) {
      if (n.inTransaction) n.txRollback(nested);
      throw ex;
    }
  };
}

function initDatabase(db, n, givenName, isMemory, isReadonly) {
  n.facadeShareRunSlot(runShared);
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
 * better-sqlite3's `Database`, on a native connection. Supports `readonly`,
 * `fileMustExist` and `timeout`; see the README for what is deliberately not supported.
 */
function Database(filenameGiven, options) {
  if (new.target == null) return new Database(filenameGiven, options);
  if (Buffer.isBuffer(filenameGiven)) throw notSupported('Opening a serialized database (Buffer)');
  if (filenameGiven == null) filenameGiven = '';
  if (options == null) options = {};
  if (typeof filenameGiven !== 'string') throw new TypeError('Expected first argument to be a string');
  if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
  if ('readOnly' in options) throw new TypeError('Misspelled option "readOnly" should be "readonly"');
  if ('memory' in options) throw new TypeError('Option "memory" was removed in v7.0.0 (use ":memory:" filename instead)');
  const filename = filenameGiven.trim();
  const anonymous = filename === '' || filename === ':memory:';
  const readonly = getBooleanOption(options, 'readonly');
  const fileMustExist = getBooleanOption(options, 'fileMustExist');
  const timeout = 'timeout' in options ? options.timeout : 5000;
  const verbose = 'verbose' in options ? options.verbose : null;
  if (readonly && anonymous) throw new TypeError('In-memory/temporary databases cannot be readonly');
  if (!Number.isInteger(timeout) || timeout < 0) throw new TypeError('Expected the "timeout" option to be a positive integer');
  if (timeout > 0x7fffffff) throw new RangeError('Option "timeout" cannot be greater than 2147483647');
  if (verbose != null) throw notSupported('The "verbose" option');
  if (!anonymous && !filename.startsWith('file:') && !existsSync(dirname(filename))) {
    throw new TypeError('Cannot open database because the directory does not exist');
  }
  initDatabase(this, new native.NativeDb(filename, { readonly, fileMustExist, timeout }), filenameGiven, anonymous, readonly);
}

function getBooleanOption(options, key) {
  let value = false;
  if (key in options && typeof (value = options[key]) !== 'boolean') {
    throw new TypeError(`Expected the "${key}" option to be a boolean`);
  }
  return value;
}

/** `store.db`: a Database object on the store's own connection. */
function createDbFacade(n, name) {
  const anonymous = name.trim() === '' || name.trim() === ':memory:';
  return initDatabase(Object.create(Database.prototype), n, name, anonymous, false);
}

Object.assign(Database.prototype, {
  prepare(source) {
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    const n = this[kNative];
    return new Statement(kCreate, n, this, source, native.facadePrepare(n.handle, source));
  },

  exec(source) {
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    this[kNative].facadeExec(source);
    return this;
  },

  pragma(source, options) {
    if (options == null) options = {};
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
    const simple = getBooleanOption(options, 'simple');
    const text = this[kNative].facadePragma(`PRAGMA ${source}`, simple);
    return text === '' ? undefined : decode(text);
  },

  transaction(fn) {
    if (typeof fn !== 'function') throw new TypeError('Expected first argument to be a function');
    const n = this[kNative];
    if (!transactionsReady.has(n)) {
      if (!n.open) throw new TypeError(NOT_OPEN);
      transactionsReady.add(n);
    }
    const properties = {
      default: { value: wrapTransaction(fn, n, 0) },
      deferred: { value: wrapTransaction(fn, n, 1) },
      immediate: { value: wrapTransaction(fn, n, 2) },
      exclusive: { value: wrapTransaction(fn, n, 3) },
      database: { value: this, enumerable: true },
    };
    Object.defineProperties(properties.default.value, properties);
    Object.defineProperties(properties.deferred.value, properties);
    Object.defineProperties(properties.immediate.value, properties);
    Object.defineProperties(properties.exclusive.value, properties);
    return properties.default.value;
  },

  close() {
    this[kNative].close();
    return this;
  },

  defaultSafeIntegers(...args) {
    if (booleanArg(args)) throw notSupported('db.defaultSafeIntegers()');
    return this;
  },

  unsafeMode(...args) {
    if (booleanArg(args)) throw notSupported('db.unsafeMode()');
    return this;
  },

  function() {
    throw notSupported('db.function() (user-defined functions)');
  },
  aggregate() {
    throw notSupported('db.aggregate() (user-defined aggregates)');
  },
  table() {
    throw notSupported('db.table() (virtual tables)');
  },
  backup() {
    throw notSupported('db.backup()');
  },
  serialize() {
    throw notSupported('db.serialize()');
  },
  loadExtension() {
    throw notSupported('db.loadExtension()');
  },

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return Object.assign(new DatabaseInspection(), this);
  },
});

const DatabaseInspection = function Database() {};
Database.SqliteError = SqliteError;

const uuidv7 = () => native.uuidv7();

function createStore(dbPath, options = {}) {
  void options; // options.DatabaseCtor is accepted and ignored: SQLite is built in.
  mkdirSync(dirname(dbPath), { recursive: true });
  const n = new native.NativeDb(dbPath);
  const assignListeners = new Set();
  // Listeners see (event, row), row being the object returned to the caller.
  function notifyAssign(row) {
    const event = {
      job_id: row.job_id,
      status: row.status,
      result: row.result ?? row.error ?? null,
      timestamp: new Date(row.updated_at_ms || Date.now()).toISOString(),
    };
    for (const listener of Array.from(assignListeners)) {
      try {
        listener(event, row);
      } catch {}
    }
  }
  // Rust flags update/retry rows with C (status changed) or U.
  function flagged(text) {
    if (text === null) return null;
    const row = decode(text.slice(1));
    if (text.charCodeAt(0) === 67) notifyAssign(row);
    return row;
  }
  for (const warning of n.openStore()) console.warn(warning);

  const store = {
    uuidv7,
    db: createDbFacade(n, dbPath),

    close() {
      n.close();
    },

    // --- agents ---
    registerAgent({ agent_id, cli, pid, capabilities = [], topics = [], heartbeat_ttl_ms = 30000, metadata = {} }) {
      const out = decode(
        n.registerAgent(agent_id, cli, pid, heartbeat_ttl_ms, JSON.stringify(capabilities), JSON.stringify(topics), JSON.stringify(metadata)),
      );
      out.agent_id = agent_id;
      return out;
    },
    getAgent(id) {
      return decode(n.getAgent(id));
    },
    refreshLease(agentId, ttlMs = 30000) {
      const out = decode(n.refreshLease(agentId, ttlMs));
      out.agent_id = agentId;
      return out;
    },
    updateAgentTopics(agentId, topics = []) {
      return n.updateAgentTopics(agentId, JSON.stringify(topics));
    },
    listOnlineAgents() {
      return decode(n.listOnlineAgents());
    },
    listAllAgents() {
      return decode(n.listAllAgents());
    },
    getAgentsByTopic(topic) {
      return decode(n.getAgentsByTopic(topic));
    },
    sweepStaleAgents() {
      return decode(n.sweepStaleAgents());
    },
    updateAgentStatus(agentId, status) {
      return n.updateAgentStatus(agentId, status);
    },

    // --- messages, human requests, dead letters, stats ---
    auditLog({ type, from, to, topic, priority = 5, ttl_ms = 300000, payload = {}, trace_id, correlation_id, status = 'queued', role_key_wire = null }) {
      const payload_json = JSON.stringify(payload);
      const [id, created_at_ms, expires_at_ms, newCorrelation, newTrace] = decode(
        n.auditLog(type, from, to, topic, priority, ttl_ms, payload_json, trace_id, correlation_id, status, role_key_wire),
      );
      return {
        id,
        type,
        from_agent: from,
        to_agent: to,
        topic,
        priority,
        ttl_ms,
        created_at_ms,
        expires_at_ms,
        correlation_id: newCorrelation ?? correlation_id,
        trace_id: newTrace ?? trace_id,
        payload_json,
        status,
        role_key_wire,
        payload,
      };
    },
    enqueueMessage(args) {
      return store.auditLog(args);
    },
    getMessage(id) {
      return decode(n.getMessage(id));
    },
    getResponseByCorrelation(cid) {
      return decode(n.getResponseByCorrelation(cid));
    },
    getMessagesByTrace(tid) {
      return decode(n.getMessagesByTrace(tid));
    },
    updateMessageStatus(id, status) {
      return n.updateMessageStatus(id, status);
    },
    getAuditMessagesForAgent(agentId, { max_messages = 20, include_topics = null } = {}) {
      const topics = Array.isArray(include_topics) && include_topics.length ? JSON.stringify(include_topics) : undefined;
      return decode(n.getAuditMessagesForAgent(agentId, max_messages, topics));
    },
    deliverToAgent(messageId, agentId) {
      return n.deliverToAgent(messageId, agentId);
    },
    deliverToTopic(messageId, topic) {
      return n.deliverToTopic(topic);
    },
    pollForAgent(agentId, { max_messages = 20, include_topics = null } = {}) {
      return store.getAuditMessagesForAgent(agentId, { max_messages, include_topics });
    },
    ackMessages() {
      return 0;
    },
    insertHumanRequest({ requester_agent, kind, prompt, requested_schema = {}, deadline_ms, default_action, correlation_id, trace_id }) {
      return decode(
        n.insertHumanRequest(requester_agent, kind, prompt, JSON.stringify(requested_schema), deadline_ms, default_action, correlation_id, trace_id),
      );
    },
    getHumanRequest(id) {
      return decode(n.getHumanRequest(id));
    },
    updateHumanRequest(id, state, resp = null) {
      return n.updateHumanRequest(id, state, resp ? JSON.stringify(resp) : null);
    },
    getPendingHumanRequests() {
      return decode(n.getPendingHumanRequests());
    },
    expireHumanRequests() {
      return n.expireHumanRequests();
    },
    moveToDeadLetter(messageId, reason, lastError = null) {
      return n.moveToDeadLetter(messageId, reason, lastError);
    },
    getDeadLetters(limit = 50) {
      return decode(n.getDeadLetters(limit));
    },
    sweepExpired() {
      return decode(n.sweepExpired());
    },
    getQueueDepths() {
      return decode(n.getQueueDepths());
    },
    getDeliveryStats() {
      return decode(n.getDeliveryStats());
    },
    getHubStats() {
      return decode(n.getHubStats());
    },
    getAuditStats() {
      return decode(n.getAuditStats());
    },

    // --- assign jobs ---
    createAssign({
      job_id,
      supervisor_agent,
      worker_agent,
      topic = 'assign.job',
      task = '',
      payload = {},
      status = 'queued',
      attempt = 1,
      retry_count = 0,
      max_retries = 0,
      priority = 5,
      ttl_ms = 600000,
      timeout_ms = 600000,
      deadline_ms,
      dispatched_at_ms = null,
      trace_id,
      correlation_id,
      last_message_id = null,
      result = null,
      error = null,
    }) {
      const row = decode(
        n.createAssign(job_id, supervisor_agent, worker_agent, topic, task, payload, status, attempt, retry_count,
          max_retries, priority, ttl_ms, timeout_ms, deadline_ms, dispatched_at_ms, trace_id, correlation_id,
          last_message_id, result, error),
      );
      notifyAssign(row);
      return row;
    },
    getAssign(jobId) {
      return decode(n.getAssign(jobId));
    },
    updateAssignStatus(jobId, status, patch = {}) {
      return flagged(n.updateAssignStatus(jobId, status, patch));
    },
    listAssigns({ supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit = 50 } = {}) {
      return decode(n.listAssigns(supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit));
    },
    retryAssign(jobId, patch = {}) {
      return flagged(n.retryAssign(jobId, patch));
    },
    onAssignStatusChange(listener) {
      if (typeof listener !== 'function') {
        return () => {};
      }
      assignListeners.add(listener);
      return () => {
        assignListeners.delete(listener);
      };
    },

    // --- reflexion ---
    addReflexion({
      type = 'reflexion',
      error_pattern,
      error_message,
      context = {},
      solution,
      solution_code = null,
      adaptive_state = {},
      confidence = 0.5,
      hit_count = 1,
      success_count = 0,
      last_hit_ms,
      created_at_ms,
      updated_at_ms,
    }) {
      return decode(
        n.addReflexion(type, error_pattern, error_message, context, solution, solution_code, adaptive_state, confidence,
          hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms),
      );
    },
    getReflexion(id) {
      return decode(n.getReflexion(id));
    },
    findReflexion(errorPattern, context = {}) {
      return decode(n.findReflexion(errorPattern, context));
    },
    updateReflexionHit(id, success = false) {
      return decode(n.updateReflexionHit(id, success));
    },
    listReflexion(filters = {}) {
      const { type, minConfidence = Number.NEGATIVE_INFINITY, projectSlug } = filters;
      return decode(n.listReflexion(type, minConfidence, projectSlug));
    },
    patchReflexion(id, patch = {}) {
      return decode(n.patchReflexion(id, patch));
    },
    deleteReflexion(id) {
      return n.deleteReflexion(id);
    },
    pruneReflexion(maxAge_ms = 30 * 24 * 3600 * 1000, minConfidence = 0.2) {
      return n.pruneReflexion(maxAge_ms, minConfidence);
    },

    // --- role registry ---
    getRole(roleKeyWire) {
      return decode(n.getRole(roleKeyWire));
    },
    upsertRoleReservation(input) {
      return decode(n.upsertRoleReservation(input));
    },
    compareAndSetRole(input) {
      return decode(n.compareAndSetRole(input));
    },
    listRoleKeys(filter = {}) {
      return decode(n.listRoleKeys(filter));
    },
    listRolesWithExpiredHolder(now) {
      return decode(n.listRolesWithExpiredHolder(now));
    },
    listRoleCandidates(roleKeyWire) {
      return decode(n.listRoleCandidates(roleKeyWire));
    },
    upsertRoleCandidate(input) {
      return decode(n.upsertRoleCandidate(input));
    },
    updateCandidateReachability(input) {
      return decode(n.updateCandidateReachability(input));
    },
    listPendingRoleMessages(roleKeyWire, now) {
      return decode(n.listPendingRoleMessages(roleKeyWire, now));
    },
    recoverRoleRegistry(now) {
      return decode(n.recoverRoleRegistry(now));
    },
  };
  return store;
}

async function importBetterSqlite3() {
  return module.exports.Database;
}

function loadNative() {
  const { platform, arch } = process;
  let abi = '';
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    abi = report && report.header && report.header.glibcVersionRuntime ? '-gnu' : '-musl';
  } else if (platform === 'win32') {
    abi = '-msvc';
  }
  const triple = `${platform}-${arch}${abi}`;
  const candidates = [
    join(__dirname, `triflux-native-store.${triple}.node`),
    `triflux-native-store-${triple}`,
  ];
  const errors = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (error) {
      errors.push(`${candidate}: ${error.message}`);
    }
  }
  throw new Error(`triflux-native-store: no native binary for ${triple}.\n${errors.join('\n')}`);
}

module.exports = { createStore, uuidv7, importBetterSqlite3, Database, SqliteError };
