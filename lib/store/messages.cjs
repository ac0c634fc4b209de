'use strict';
// Messages: the audit log, lookups, status changes, the replay for agents, the
// compatibility stubs, and the dead-letter queue.

const { clampMaxMessages } = require('./limits.cjs');
const { transaction } = require('./statements.cjs');
const { TxKind } = require('../protocol.cjs');

function messageMethods({ S, n, store, uuidv7 }) {
  return {
    auditLog({ type, from, to, topic, priority = 5, ttl_ms = 300000, payload = {}, trace_id, correlation_id, status = 'queued', role_key_wire = null }) {
      const now = Date.now();
      const row = {
        id: uuidv7(),
        type,
        from_agent: from,
        to_agent: to,
        topic,
        priority,
        ttl_ms,
        created_at_ms: now,
        expires_at_ms: now + ttl_ms,
        correlation_id: correlation_id || uuidv7(),
        trace_id: trace_id || uuidv7(),
        payload_json: JSON.stringify(payload),
        status,
        role_key_wire,
      };
      S.insertAuditMessage.run(row);
      return { ...row, payload };
    },

    // Older callers enqueue; the audit log is the queue now.
    enqueueMessage(args) {
      return store.auditLog(args);
    },

    getMessage(id) {
      return S.getMsg.get(id) ?? null;
    },

    getResponseByCorrelation(cid) {
      return S.getResponse.get(cid) ?? null;
    },

    getMessagesByTrace(tid) {
      return S.getMsgsByTrace.all(tid);
    },

    updateMessageStatus(id, status) {
      return S.setMsgStatus.run(status, id).changes > 0;
    },

    getAuditMessagesForAgent(agentId, { max_messages = 20, include_topics = null } = {}) {
      const limit = clampMaxMessages(max_messages);
      const topics = Array.isArray(include_topics) && include_topics.length ? include_topics : store.getAgent(agentId)?.topics || [];
      return topics.length
        ? S.recentAgentMessagesWithTopics.all(agentId, JSON.stringify(topics), limit)
        : S.recentAgentMessages.all(agentId, limit);
    },

    // Compatibility: there is no per-agent inbox any more, only the audit log.
    deliverToAgent(messageId, agentId) {
      return !!store.getMessage(messageId) && !!agentId;
    },

    deliverToTopic(messageId, topic) {
      void messageId;
      return store.getAgentsByTopic(topic).length;
    },

    pollForAgent(agentId, { max_messages = 20, include_topics = null } = {}) {
      return store.getAuditMessagesForAgent(agentId, { max_messages, include_topics });
    },

    ackMessages() {
      return 0;
    },

    moveToDeadLetter(messageId, reason, lastError = null) {
      transaction(n, TxKind.BEGIN, () => {
        S.setMsgStatus.run('dead_letter', messageId);
        S.insertDL.run(messageId, reason, Date.now(), lastError);
      });
      return true;
    },

    getDeadLetters(limit = 50) {
      return S.getDL.all(limit);
    },
  };
}

module.exports = { messageMethods };
