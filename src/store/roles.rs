//! The role registry: reservations, compare-and-set with activation guards, candidates and
//! their reachability, pending role messages and the restart recovery (the JS layer runs
//! the reservation and the recovery in IMMEDIATE transactions), and listRoleKeys' query
//! built from the filters given.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::parsed_rows::{CANDIDATE, MESSAGE, PLAIN};
use super::query::query;
use super::stmt::{Effect, Stmt};
use crate::engine::bind::{bind_args_with, Arg};
use crate::engine::connection::with_handle;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::returned::Returned;
use crate::ffi::napi::Napi;

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new("getRole", "SELECT * FROM role_registry WHERE role_key_wire = ?"),
    Stmt::new(
        "insertRoleReservation",
        "INSERT INTO role_registry (
 role_key_wire, project_id, role_kind, scope_id, state,
 holder_agent_id, previous_holder_agent_id, epoch, activation_seq,
 activation_id, activation_deadline_ms, holder_lease_expires_ms,
 charter_version, charter_acked_epoch, retry_count, next_probe_ms,
 blocked_reason, last_transition_ms, last_reason, version
) VALUES (
 @role_key_wire, @project_id, @role_kind, @scope_id, @state,
 @holder_agent_id, @previous_holder_agent_id, @epoch, @activation_seq,
 @activation_id, @activation_deadline_ms, @holder_lease_expires_ms,
 @charter_version, @charter_acked_epoch, @retry_count, @next_probe_ms,
 @blocked_reason, @last_transition_ms, @last_reason, @version
)",
    ),
    Stmt::new(
        "updateRoleReservation",
        "UPDATE role_registry SET
 state=@state, holder_agent_id=@holder_agent_id, previous_holder_agent_id=@previous_holder_agent_id,
 epoch=@epoch, activation_seq=@activation_seq, activation_id=@activation_id,
 activation_deadline_ms=@activation_deadline_ms, holder_lease_expires_ms=@holder_lease_expires_ms,
 charter_version=@charter_version, charter_acked_epoch=@charter_acked_epoch, retry_count=@retry_count,
 next_probe_ms=@next_probe_ms, blocked_reason=@blocked_reason, last_transition_ms=@last_transition_ms,
 last_reason=@last_reason, version=version + 1
 WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch",
    ),
    // Epoch and activation_seq never move through a compare-and-set; `IS` compares a NULL
    // activation id too.
    Stmt::new(
        "compareAndSetRole",
        "UPDATE role_registry SET
 state=@state, holder_agent_id=@holder_agent_id, previous_holder_agent_id=@previous_holder_agent_id,
 activation_id=@activation_id, activation_deadline_ms=@activation_deadline_ms,
 holder_lease_expires_ms=@holder_lease_expires_ms, charter_version=@charter_version,
 charter_acked_epoch=@charter_acked_epoch, retry_count=@retry_count, next_probe_ms=@next_probe_ms,
 blocked_reason=@blocked_reason, last_transition_ms=@last_transition_ms, last_reason=@last_reason,
 version=version + 1
 WHERE role_key_wire=@role_key_wire AND epoch=@expected_epoch AND activation_seq=@expected_activation_seq
 AND activation_id IS @expected_activation_id AND version=@expected_version",
    ),
    Stmt::new("listRoles", "SELECT * FROM role_registry ORDER BY role_key_wire"),
    Stmt::new(
        "expiredHolderRoles",
        "SELECT * FROM role_registry WHERE holder_agent_id IS NOT NULL
 AND (holder_lease_expires_ms IS NULL OR holder_lease_expires_ms <= ?) ORDER BY role_key_wire",
    ),
    Stmt::new(
        "listRoleCandidates",
        "SELECT * FROM role_candidates WHERE role_key_wire = ? ORDER BY priority DESC, updated_at_ms DESC, agent_id",
    )
    .rows(&CANDIDATE),
    Stmt::new(
        "getRoleCandidate",
        "SELECT * FROM role_candidates WHERE role_key_wire = ? AND agent_id = ?",
    )
    .rows(&CANDIDATE),
    Stmt::new(
        "upsertRoleCandidate",
        "INSERT INTO role_candidates (
 role_key_wire, agent_id, source, priority, transport_locators_json,
 consecutive_probe_failures, excluded_until_ms, last_probe_ms, last_probe_code, updated_at_ms
) VALUES (
 @role_key_wire, @agent_id, @source, @priority, @transport_locators_json,
 @consecutive_probe_failures, @excluded_until_ms, @last_probe_ms, @last_probe_code, @updated_at_ms
)
ON CONFLICT(role_key_wire, agent_id) DO UPDATE SET
 source=excluded.source, priority=excluded.priority, transport_locators_json=excluded.transport_locators_json,
 consecutive_probe_failures=excluded.consecutive_probe_failures, excluded_until_ms=excluded.excluded_until_ms,
 last_probe_ms=excluded.last_probe_ms, last_probe_code=excluded.last_probe_code, updated_at_ms=excluded.updated_at_ms",
    ),
    Stmt::new(
        "updateCandidateReachability",
        "UPDATE role_candidates SET
 consecutive_probe_failures=@consecutive_probe_failures, excluded_until_ms=@excluded_until_ms,
 last_probe_ms=@last_probe_ms, last_probe_code=@last_probe_code, updated_at_ms=@updated_at_ms
 WHERE role_key_wire=@role_key_wire AND agent_id=@agent_id",
    ),
    Stmt::new(
        "pendingRoleMessages",
        "SELECT * FROM messages WHERE role_key_wire=? AND status IN ('queued','delivered') AND expires_at_ms > ?
 ORDER BY priority DESC, created_at_ms ASC, id",
    )
    .rows(&MESSAGE)
    .effect(Effect::TickRead),
    Stmt::new(
        "recoverExpiredRole",
        "UPDATE role_registry SET
 state='electable', previous_holder_agent_id=holder_agent_id, holder_agent_id=NULL,
 epoch=epoch + 1, activation_seq=activation_seq + 1, activation_id=NULL,
 activation_deadline_ms=NULL, holder_lease_expires_ms=NULL, charter_acked_epoch=NULL,
 blocked_reason=NULL, last_transition_ms=@now, last_reason='restart_holder_lease_expired', version=version + 1
 WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch",
    ),
    Stmt::new(
        "recoverLiveRole",
        "UPDATE role_registry SET
 state='elected-probing', epoch=epoch + 1, activation_seq=activation_seq + 1,
 activation_id=@activation_id, activation_deadline_ms=NULL, charter_acked_epoch=NULL,
 blocked_reason=NULL, last_transition_ms=@now, last_reason='restart_reprobe_required', version=version + 1
 WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch",
    ),
    Stmt::new(
        "recoverOrphanedActivation",
        "UPDATE role_registry SET
 state='electable', epoch=epoch + 1, activation_seq=activation_seq + 1,
 activation_id=NULL, activation_deadline_ms=NULL, charter_acked_epoch=NULL,
 last_transition_ms=@now, last_reason='restart_activation_fenced', version=version + 1
 WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch",
    ),
];

/// The columns listRoleKeys may filter on by equality.
const KEY_COLUMNS: [&str; 4] = ["project_id", "role_kind", "scope_id", "state"];

/// listRoleKeys' SQL: `col=@col` per filter given, then `state IN (@state_0, …)` with an
/// empty slot for each hole of the caller's array (as the original's `map().join()` left
/// them, a syntax error then).
fn keys_sql(columns: &[String], states: Option<&[bool]>) -> SResult<String> {
    let mut clauses = Vec::with_capacity(columns.len() + 1);
    for column in columns {
        if !KEY_COLUMNS.contains(&column.as_str()) {
            return Err(StoreError::range_error(format!(
                "listRoleKeys cannot filter on {column}"
            )));
        }
        clauses.push(format!("{column}=@{column}"));
    }
    if let Some(states) = states {
        let list: Vec<String> = states
            .iter()
            .enumerate()
            .map(|(i, &present)| if present { format!("@state_{i}") } else { String::new() })
            .collect();
        clauses.push(format!("state IN ({})", list.join(",")));
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    Ok(format!(
        "SELECT role_key_wire FROM role_registry{filter} ORDER BY role_key_wire"
    ))
}

/// listRoleKeys: `columns` are the filters given; `states`, when given, one flag per
/// element of the caller's non-empty `states` array (false for a hole); `params` the named
/// values. Returns the rows (`{ role_key_wire }`).
#[napi]
pub fn store_list_role_keys(
    env: Env,
    db: u32,
    columns: Vec<String>,
    states: Option<Vec<bool>>,
    params: JsVal,
) -> Result<Returned> {
    with_handle(&env, db, |core| {
        let sql = keys_sql(&columns, states.as_deref())?;
        query(
            core,
            Napi::new(env.raw()),
            &sql,
            |stmt| bind_args_with(Napi::new(env.raw()), stmt, &[Arg::Js(params)]),
            &PLAIN,
        )
        .map(Returned)
    })
}
