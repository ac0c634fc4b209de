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

    // --- reflexion ---

    // --- role registry ---
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
