'use strict';
// Assign jobs and their status listeners.

const native = require('../native.cjs');
const { DEFAULT_ASSIGN_TIMEOUT_MS, DEFAULT_ASSIGN_TTL_MS, clampDurationMs, clampMaxMessages, clampPriority } = require('./limits.cjs');
const { atomic, elementFlags } = require('./statements.cjs');

const TERMINAL = ['succeeded', 'failed', 'timed_out'];

function assignMethods({ S, n, store, uuidv7 }) {
  const listeners = new Set();

  // Listeners see (event, row), row being the very object returned to the caller;
  // they run in order over a snapshot of the set, and their exceptions are swallowed.
  function notify(row) {
    const event = {
      job_id: row.job_id,
      status: row.status,
      result: row.result ?? row.error ?? null,
      timestamp: new Date(row.updated_at_ms || Date.now()).toISOString(),
    };
    for (const listener of Array.from(listeners)) {
      try {
        listener(event, row);
      } catch {}
    }
  }

  /** The next row of a job from its current row and a patch (updateAssignStatus). */
  function nextAssignRow(current, status, patch, now) {
    const nextStatus = status || current.status;
    const isTerminal = TERMINAL.includes(nextStatus);
    const nextTimeout = clampDurationMs(patch.timeout_ms ?? current.timeout_ms, current.timeout_ms);
    const own = (key) => Object.hasOwn(patch, key);
    return {
      job_id: current.job_id,
      supervisor_agent: patch.supervisor_agent ?? current.supervisor_agent,
      worker_agent: patch.worker_agent ?? current.worker_agent,
      topic: patch.topic ?? current.topic,
      task: patch.task ?? current.task,
      payload_json: JSON.stringify(patch.payload ?? current.payload ?? {}),
      status: nextStatus,
      attempt: Math.max(1, Number(patch.attempt ?? current.attempt) || current.attempt || 1),
      retry_count: Math.max(0, Number(patch.retry_count ?? current.retry_count) || 0),
      max_retries: Math.max(0, Number(patch.max_retries ?? current.max_retries) || 0),
      priority: clampPriority(patch.priority ?? current.priority, current.priority || 5),
      ttl_ms: clampDurationMs(patch.ttl_ms ?? current.ttl_ms, current.ttl_ms || nextTimeout),
      timeout_ms: nextTimeout,
      deadline_ms: (() => {
        if (own('deadline_ms')) return patch.deadline_ms == null ? null : Math.trunc(Number(patch.deadline_ms));
        if (isTerminal) return null;
        if (nextStatus === 'running' && !current.deadline_ms) return now + nextTimeout;
        return current.deadline_ms;
      })(),
      trace_id: patch.trace_id ?? current.trace_id,
      correlation_id: patch.correlation_id ?? current.correlation_id,
      last_message_id: own('last_message_id') ? patch.last_message_id : current.last_message_id,
      result_json: own('result')
        ? patch.result == null
          ? null
          : JSON.stringify(patch.result)
        : current.result == null
          ? null
          : JSON.stringify(current.result),
      error_json: own('error')
        ? patch.error == null
          ? null
          : JSON.stringify(patch.error)
        : current.error == null
          ? null
          : JSON.stringify(current.error),
      updated_at_ms: now,
      started_at_ms: own('started_at_ms')
        ? patch.started_at_ms
        : nextStatus === 'running'
          ? current.started_at_ms || now
          : current.started_at_ms,
      dispatched_at_ms: own('dispatched_at_ms') ? patch.dispatched_at_ms : current.dispatched_at_ms,
      completed_at_ms: own('completed_at_ms')
        ? patch.completed_at_ms
        : isTerminal
          ? current.completed_at_ms || now
          : current.completed_at_ms,
      last_retry_at_ms: own('last_retry_at_ms') ? patch.last_retry_at_ms : current.last_retry_at_ms,
    };
  }

  return {
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
      ttl_ms = DEFAULT_ASSIGN_TTL_MS,
      timeout_ms = DEFAULT_ASSIGN_TIMEOUT_MS,
      deadline_ms,
      dispatched_at_ms = null,
      trace_id,
      correlation_id,
      last_message_id = null,
      result = null,
      error = null,
    }) {
      // The row is computed before the transaction opens, as the original computed it
      // before its INSERT: a caller's callback (a toJSON, a valueOf) that writes to the
      // store keeps its write even when the INSERT then fails.
      const now = Date.now();
      const normalizedTimeout = clampDurationMs(timeout_ms, DEFAULT_ASSIGN_TIMEOUT_MS);
      const row = {
        job_id: job_id || uuidv7(),
        supervisor_agent,
        worker_agent,
        topic: String(topic || 'assign.job'),
        task: String(task || ''),
        payload_json: JSON.stringify(payload || {}),
        status,
        attempt: Math.max(1, Number(attempt) || 1),
        retry_count: Math.max(0, Number(retry_count) || 0),
        max_retries: Math.max(0, Number(max_retries) || 0),
        priority: clampPriority(priority, 5),
        ttl_ms: clampDurationMs(ttl_ms, normalizedTimeout),
        timeout_ms: normalizedTimeout,
        // null is Number 0: an already-due deadline, as in the original.
        deadline_ms: Number.isFinite(Number(deadline_ms)) ? Math.trunc(Number(deadline_ms)) : now + normalizedTimeout,
        trace_id: trace_id || uuidv7(),
        correlation_id: correlation_id || uuidv7(),
        last_message_id,
        result_json: result == null ? null : JSON.stringify(result),
        error_json: error == null ? null : JSON.stringify(error),
        created_at_ms: now,
        updated_at_ms: now,
        started_at_ms: status === 'running' ? now : null,
        dispatched_at_ms:
          dispatched_at_ms == null || !Number.isFinite(Number(dispatched_at_ms)) ? null : Math.trunc(Number(dispatched_at_ms)),
        completed_at_ms: TERMINAL.includes(status) ? now : null,
        last_retry_at_ms: retry_count > 0 ? now : null,
      };
      const inserted = atomic(n, () => {
        S.insertAssign.run(row);
        return store.getAssign(row.job_id);
      });
      notify(inserted);
      return inserted;
    },

    getAssign(jobId) {
      return S.getAssign.get(jobId) ?? null;
    },

    updateAssignStatus(jobId, status, patch = {}) {
      const change = atomic(n, () => {
        const current = store.getAssign(jobId);
        if (!current) return null;
        S.updateAssign.run(nextAssignRow(current, status, patch, Date.now()));
        return { current, updated: store.getAssign(jobId) };
      });
      if (change === null) return null;
      const { current, updated } = change;
      if (updated && current.status !== updated.status) notify(updated);
      return updated;
    },

    listAssigns({ supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit = 50 } = {}) {
      // The filters given, in the original's order; the SQL is built from them natively.
      const columns = [];
      const values = [];
      for (const [column, value] of [
        ['supervisor_agent', supervisor_agent],
        ['worker_agent', worker_agent],
        ['trace_id', trace_id],
        ['correlation_id', correlation_id],
      ]) {
        if (value) {
          columns.push(column);
          values.push(value);
        }
      }
      const statusList = Array.isArray(statuses) && statuses.length ? statuses : status ? [status] : [];
      const statusMarks = elementFlags(statusList);
      values.push(...statusList);
      const activeBefore = Number.isFinite(Number(active_before_ms));
      if (activeBefore) values.push(Math.trunc(Number(active_before_ms)));
      values.push(clampMaxMessages(limit, 50));
      return native.storeListAssigns(n.handle, columns, statusMarks, activeBefore, values);
    },

    retryAssign(jobId, patch = {}) {
      return atomic(n, () => {
        const current = store.getAssign(jobId);
        if (!current) return null;
        const nextRetryCount = Math.max(0, Number(patch.retry_count ?? current.retry_count + 1) || 0);
        const nextAttempt = Math.max(current.attempt + 1, Number(patch.attempt ?? current.attempt + 1) || 1);
        const nextTimeout = clampDurationMs(patch.timeout_ms ?? current.timeout_ms, current.timeout_ms);
        return store.updateAssignStatus(jobId, 'queued', {
          retry_count: nextRetryCount,
          attempt: nextAttempt,
          timeout_ms: nextTimeout,
          ttl_ms: patch.ttl_ms ?? current.ttl_ms,
          deadline_ms: Date.now() + nextTimeout,
          completed_at_ms: null,
          started_at_ms: null,
          dispatched_at_ms: null,
          last_retry_at_ms: Date.now(),
          result: patch.result ?? null,
          error: Object.hasOwn(patch, 'error') ? patch.error : current.error,
          last_message_id: null,
        });
      });
    },

    onAssignStatusChange(listener) {
      if (typeof listener !== 'function') {
        return () => {};
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

module.exports = { assignMethods };
