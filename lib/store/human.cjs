'use strict';
// Human-in-the-loop requests.

function humanMethods({ S, uuidv7 }) {
  return {
    insertHumanRequest({ requester_agent, kind, prompt, requested_schema = {}, deadline_ms, default_action, correlation_id, trace_id }) {
      const requestId = uuidv7();
      const now = Date.now();
      const deadlineAt = now + deadline_ms; // a duration: undefined gives NaN, bound as NULL
      S.insertHR.run({
        request_id: requestId,
        requester_agent,
        kind,
        prompt,
        schema_json: JSON.stringify(requested_schema),
        state: 'pending',
        deadline_ms: deadlineAt,
        default_action,
        correlation_id: correlation_id || uuidv7(),
        trace_id: trace_id || uuidv7(),
        response_json: null,
      });
      return { request_id: requestId, state: 'pending', deadline_ms: deadlineAt };
    },

    getHumanRequest(id) {
      return S.getHR.get(id) ?? null;
    },

    updateHumanRequest(id, state, resp = null) {
      // A falsy response (0, "", false) is stored as NULL, as in the original.
      return S.updateHR.run(state, resp ? JSON.stringify(resp) : null, id).changes > 0;
    },

    getPendingHumanRequests() {
      return S.pendingHR.all();
    },

    expireHumanRequests() {
      return S.expireHR.run(Date.now()).changes;
    },
  };
}

module.exports = { humanMethods };
