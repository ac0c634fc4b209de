//! Assign jobs: the statements of createAssign, getAssign, updateAssignStatus and
//! retryAssign, and listAssigns' query built from the filters given.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::parsed_rows::ASSIGN;
use super::query::query;
use super::stmt::Stmt;
use crate::engine::bind::{args_of, bind_args_with};
use crate::engine::connection::with_handle;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::returned::Returned;
use crate::ffi::napi::Napi;

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "insertAssign",
        "INSERT INTO assign_jobs (
 job_id, supervisor_agent, worker_agent, topic, task, payload_json,
 status, attempt, retry_count, max_retries, priority, ttl_ms, timeout_ms, deadline_ms,
 trace_id, correlation_id, last_message_id, result_json, error_json,
 created_at_ms, updated_at_ms, started_at_ms, dispatched_at_ms, completed_at_ms, last_retry_at_ms
) VALUES (
 @job_id, @supervisor_agent, @worker_agent, @topic, @task, @payload_json,
 @status, @attempt, @retry_count, @max_retries, @priority, @ttl_ms, @timeout_ms, @deadline_ms,
 @trace_id, @correlation_id, @last_message_id, @result_json, @error_json,
 @created_at_ms, @updated_at_ms, @started_at_ms, @dispatched_at_ms, @completed_at_ms, @last_retry_at_ms
)",
    ),
    Stmt::new("getAssign", "SELECT * FROM assign_jobs WHERE job_id = ?").rows(&ASSIGN),
    Stmt::new(
        "updateAssign",
        "UPDATE assign_jobs SET
 supervisor_agent=@supervisor_agent, worker_agent=@worker_agent, topic=@topic, task=@task,
 payload_json=@payload_json, status=@status, attempt=@attempt, retry_count=@retry_count,
 max_retries=@max_retries, priority=@priority, ttl_ms=@ttl_ms, timeout_ms=@timeout_ms,
 deadline_ms=@deadline_ms, trace_id=@trace_id, correlation_id=@correlation_id,
 last_message_id=@last_message_id, result_json=@result_json, error_json=@error_json,
 updated_at_ms=@updated_at_ms, started_at_ms=@started_at_ms, dispatched_at_ms=@dispatched_at_ms,
 completed_at_ms=@completed_at_ms, last_retry_at_ms=@last_retry_at_ms
 WHERE job_id=@job_id",
    ),
];

/// The columns listAssigns may filter on by equality.
const FILTER_COLUMNS: [&str; 4] = ["supervisor_agent", "worker_agent", "trace_id", "correlation_id"];

/// listAssigns' SQL: `col = ?` for each filter given (in the given order), then the
/// status list (`?` per element of `statuses`, an empty slot per hole), then the deadline
/// bound; the limit last.
fn list_sql(columns: &[String], statuses: &[bool], active_before: bool) -> SResult<String> {
    let mut clauses = Vec::with_capacity(columns.len() + 2);
    for column in columns {
        if !FILTER_COLUMNS.contains(&column.as_str()) {
            return Err(StoreError::range_error(format!(
                "listAssigns cannot filter on {column}"
            )));
        }
        clauses.push(format!("{column} = ?"));
    }
    if !statuses.is_empty() {
        let marks: Vec<&str> = statuses.iter().map(|&present| if present { "?" } else { "" }).collect();
        clauses.push(format!("status IN ({})", marks.join(",")));
    }
    if active_before {
        clauses.push("deadline_ms IS NOT NULL AND deadline_ms <= ?".to_string());
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {} ", clauses.join(" AND "))
    };
    Ok(format!(
        "SELECT * FROM assign_jobs {filter}ORDER BY updated_at_ms DESC LIMIT ?"
    ))
}

/// listAssigns: `columns` are the equality filters given, `statuses` one flag per element
/// of the status list (false for a hole), `activeBefore` whether the deadline bound
/// applies; `values` are the values to bind, in that order, the limit last.
#[napi]
pub fn store_list_assigns(
    env: Env,
    db: u32,
    columns: Vec<String>,
    statuses: Vec<bool>,
    active_before: bool,
    values: JsVal,
) -> Result<Returned> {
    with_handle(&env, db, |core| {
        let sql = list_sql(&columns, &statuses, active_before)?;
        query(
            core,
            Napi::new(env.raw()),
            &sql,
            |stmt| bind_args_with(Napi::new(env.raw()), stmt, &args_of(&values)?),
            &ASSIGN,
        )
        .map(Returned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_clauses_in_order() {
        let sql = list_sql(&["worker_agent".into(), "trace_id".into()], &[true, true], true).unwrap();
        assert_eq!(
            sql,
            "SELECT * FROM assign_jobs WHERE worker_agent = ? AND trace_id = ? AND status IN (?,?) \
             AND deadline_ms IS NOT NULL AND deadline_ms <= ? ORDER BY updated_at_ms DESC LIMIT ?"
        );
        assert_eq!(
            list_sql(&[], &[], false).unwrap(),
            "SELECT * FROM assign_jobs ORDER BY updated_at_ms DESC LIMIT ?"
        );
        assert!(list_sql(&[], &[true, false], false).unwrap().contains("status IN (?,)"));
        assert!(list_sql(&["status; DROP TABLE x".into()], &[], false).is_err());
    }
}
