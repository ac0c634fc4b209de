//! Human-in-the-loop requests.

use super::parsed_rows::HUMAN_REQUEST;
use super::stmt::Stmt;

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "insertHR",
        "INSERT INTO human_requests (request_id, requester_agent, kind, prompt, schema_json, state, deadline_ms, default_action, correlation_id, trace_id, response_json)
 VALUES (@request_id, @requester_agent, @kind, @prompt, @schema_json, @state, @deadline_ms, @default_action, @correlation_id, @trace_id, @response_json)",
    ),
    Stmt::new("getHR", "SELECT * FROM human_requests WHERE request_id=?").rows(&HUMAN_REQUEST),
    Stmt::new("updateHR", "UPDATE human_requests SET state=?, response_json=? WHERE request_id=?"),
    Stmt::new("pendingHR", "SELECT * FROM human_requests WHERE state='pending'").rows(&HUMAN_REQUEST),
    Stmt::new("expireHR", "UPDATE human_requests SET state='timed_out' WHERE state='pending' AND deadline_ms < ?"),
];
