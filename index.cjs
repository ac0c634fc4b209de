'use strict';
// triflux-native-store: the JS face of the native store. This file only shapes the
// public object: it applies the original's parameter destructuring (same defaults,
// same V8 errors), JSON.stringify of caller values, JSON.parse of the rows Rust
// writes, and the assign-status listeners. Every statement and rule lives in Rust.

const { mkdirSync } = require('node:fs');
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

const uuidv7 = () => native.uuidv7();

function createStore(dbPath, options = {}) {
  void options; // options.DatabaseCtor is accepted and ignored: SQLite is built in.
  mkdirSync(dirname(dbPath), { recursive: true });
  const n = new native.NativeDb(dbPath);
  for (const warning of n.openStore()) console.warn(warning);

  const store = {
    uuidv7,

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

    // --- assign jobs ---

    // --- reflexion ---

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

module.exports = { createStore, uuidv7, importBetterSqlite3, SqliteError };
