'use strict';
// The store object: the original's method names, parameter destructuring (so defaults
// and V8's own TypeErrors are identical) and JSON.stringify of caller values, around
// the native methods. Every statement and rule lives in Rust.

const { mkdirSync } = require('node:fs');
const { dirname } = require('node:path');

const native = require('./native.cjs');
const { createDbFacade } = require('./database.cjs');
const { decode, decodeFlagged } = require('./protocol.cjs');

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
  // Rust flags update/retry rows by whether the status changed (see protocol.cjs).
  function flagged(text) {
    const out = decodeFlagged(text);
    if (out === null) return null;
    if (out.changed) notifyAssign(out.row);
    return out.row;
  }
  let warnings;
  try {
    warnings = n.openStore();
  } catch (error) {
    n.close(); // a file the store cannot use is not held open
    throw error;
  }
  for (const warning of warnings) console.warn(warning);

  const store = {
    uuidv7,
    db: createDbFacade(n, dbPath),

    close() {
      n.close();
    },

    // --- agents ---
    // `now + x` stays JS's own `+` (ToPrimitive, string concatenation, BigInt errors),
    // evaluated where the original did, before its JSON.stringify calls.
    registerAgent({ agent_id, cli, pid, capabilities = [], topics = [], heartbeat_ttl_ms = 30000, metadata = {} }) {
      const now = Date.now();
      const leaseExpires = now + heartbeat_ttl_ms;
      const out = decode(
        n.registerAgent(
          { agent_id, cli, pid, lease: leaseExpires, capabilities_json: JSON.stringify(capabilities), topics_json: JSON.stringify(topics), metadata_json: JSON.stringify(metadata) },
          now,
        ),
      );
      out.agent_id = agent_id;
      out.lease_expires_ms = leaseExpires;
      return out;
    },
    getAgent(id) {
      return decode(n.getAgent(id));
    },
    refreshLease(agentId, ttlMs = 30000) {
      const now = Date.now();
      const out = decode(n.refreshLease(agentId, now, now + ttlMs));
      out.agent_id = agentId;
      out.lease_expires_ms = now + ttlMs; // computed twice, as the original does
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
      const created_at_ms = Date.now();
      const expires_at_ms = created_at_ms + ttl_ms;
      const payload_json = JSON.stringify(payload);
      const [id, newCorrelation, newTrace] = decode(
        n.auditLog({ msg_type: type, from, to, topic, priority, ttl_ms, expires_at: expires_at_ms, payload_json, trace_id, correlation_id, status, role_key_wire }, created_at_ms),
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
      const now = Date.now();
      const deadlineAt = now + deadline_ms;
      const out = decode(
        n.insertHumanRequest({ requester_agent, kind, prompt, schema_json: JSON.stringify(requested_schema), deadline_at: deadlineAt, default_action, correlation_id, trace_id }, now),
      );
      out.deadline_ms = deadlineAt;
      return out;
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
        n.createAssign({ job_id, supervisor_agent, worker_agent, topic, task, payload, status, attempt, retry_count,
          max_retries, priority, ttl_ms, timeout_ms, deadline_ms, dispatched_at_ms, trace_id, correlation_id,
          last_message_id, result, error }),
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
      return decode(n.listAssigns({ supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit }));
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
        n.addReflexion({ entry_type: type, error_pattern, error_message, context, solution, solution_code, adaptive_state, confidence,
          hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms }),
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

module.exports = { createStore, uuidv7 };
