//! Role registry (issue 4): reservations under BEGIN IMMEDIATE, compare-and-set with
//! activation guards, candidates and their reachability, pending role messages and the
//! restart recovery.
//!
//! The original computed every row value in JavaScript from the caller's input and the
//! current row, then bound it. The same values are `Val`s here (caller values, and column
//! values as better-sqlite3 returns them), so that `??`, `=== undefined`, `!==` and the
//! later binding behave exactly as they did.
//!
//! - `reserve`: upsertRoleReservation; `cas`: compareAndSetRole; `candidates`: the
//!   candidate upsert and reachability; `recover`: recoverRoleRegistry.

mod candidates;
mod cas;
mod recover;
mod reserve;

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::js::bind::{bind_all, bound_from_js, Arg, Bound};
use crate::js::json_out::{JsonOut, CANDIDATE, MESSAGE, RAW};
use crate::js::model::Val;
use crate::js::v8::V8;
use crate::js::value::JsVal;
use crate::native_db::NativeDb;
use crate::sqlite::error::{SResult, StoreError};
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::queries::{self as exec, read_row, Row};
use crate::store::role_key::decode;

const STATES: [&str; 5] = ["electable", "elected-probing", "active", "unreachable", "quarantined"];

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[
    CAS_ROLE,
    EXPIRED_HOLDERS,
    GET_CANDIDATE,
    GET_ROLE,
    INSERT_ROLE,
    LIST_CANDIDATES,
    LIST_ROLES,
    PENDING_MESSAGES,
    RECOVER_EXPIRED,
    RECOVER_LIVE,
    RECOVER_ORPHANED,
    UPDATE_REACHABILITY,
    UPDATE_RESERVATION,
    UPSERT_CANDIDATE,
];

const GET_ROLE: &str = "SELECT * FROM role_registry WHERE role_key_wire = ?";
const LIST_ROLES: &str = "SELECT * FROM role_registry ORDER BY role_key_wire";
const INSERT_ROLE: &str = "INSERT INTO role_registry (
 role_key_wire, project_id, role_kind, scope_id, state,
 holder_agent_id, previous_holder_agent_id, epoch, activation_seq,
 activation_id, activation_deadline_ms, holder_lease_expires_ms,
 charter_version, charter_acked_epoch, retry_count, next_probe_ms,
 blocked_reason, last_transition_ms, last_reason, version
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)";
const UPDATE_RESERVATION: &str = "UPDATE role_registry SET
 state=?1, holder_agent_id=?2, previous_holder_agent_id=?3, epoch=?4, activation_seq=?5,
 activation_id=?6, activation_deadline_ms=?7, holder_lease_expires_ms=?8, charter_version=?9,
 charter_acked_epoch=?10, retry_count=?11, next_probe_ms=?12, blocked_reason=?13,
 last_transition_ms=?14, last_reason=?15, version=version + 1
 WHERE role_key_wire=?16 AND version=?17 AND epoch=?18";
const CAS_ROLE: &str = "UPDATE role_registry SET
 state=?1, holder_agent_id=?2, previous_holder_agent_id=?3, activation_id=?4,
 activation_deadline_ms=?5, holder_lease_expires_ms=?6, charter_version=?7,
 charter_acked_epoch=?8, retry_count=?9, next_probe_ms=?10, blocked_reason=?11,
 last_transition_ms=?12, last_reason=?13, version=version + 1
 WHERE role_key_wire=?14 AND epoch=?15 AND activation_seq=?16 AND activation_id IS ?17 AND version=?18";
const EXPIRED_HOLDERS: &str = "SELECT * FROM role_registry WHERE holder_agent_id IS NOT NULL
 AND (holder_lease_expires_ms IS NULL OR holder_lease_expires_ms <= ?) ORDER BY role_key_wire";
const LIST_CANDIDATES: &str =
    "SELECT * FROM role_candidates WHERE role_key_wire = ? ORDER BY priority DESC, updated_at_ms DESC, agent_id";
const GET_CANDIDATE: &str = "SELECT * FROM role_candidates WHERE role_key_wire = ? AND agent_id = ?";
const UPSERT_CANDIDATE: &str = "INSERT INTO role_candidates (
 role_key_wire, agent_id, source, priority, transport_locators_json,
 consecutive_probe_failures, excluded_until_ms, last_probe_ms, last_probe_code, updated_at_ms
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
ON CONFLICT(role_key_wire, agent_id) DO UPDATE SET
 source=excluded.source, priority=excluded.priority,
 transport_locators_json=excluded.transport_locators_json,
 consecutive_probe_failures=excluded.consecutive_probe_failures,
 excluded_until_ms=excluded.excluded_until_ms, last_probe_ms=excluded.last_probe_ms,
 last_probe_code=excluded.last_probe_code, updated_at_ms=excluded.updated_at_ms";
const UPDATE_REACHABILITY: &str = "UPDATE role_candidates SET
 consecutive_probe_failures=?1, excluded_until_ms=?2, last_probe_ms=?3, last_probe_code=?4, updated_at_ms=?5
 WHERE role_key_wire=?6 AND agent_id=?7";
const PENDING_MESSAGES: &str = "SELECT * FROM messages WHERE role_key_wire=?
 AND status IN ('queued','delivered') AND expires_at_ms > ? ORDER BY priority DESC, created_at_ms ASC, id";
const RECOVER_EXPIRED: &str = "UPDATE role_registry SET
 state='electable', previous_holder_agent_id=holder_agent_id, holder_agent_id=NULL,
 epoch=epoch + 1, activation_seq=activation_seq + 1, activation_id=NULL,
 activation_deadline_ms=NULL, holder_lease_expires_ms=NULL, charter_acked_epoch=NULL,
 blocked_reason=NULL, last_transition_ms=?1, last_reason='restart_holder_lease_expired',
 version=version + 1
 WHERE role_key_wire=?2 AND version=?3 AND epoch=?4";
const RECOVER_LIVE: &str = "UPDATE role_registry SET
 state='elected-probing', epoch=epoch + 1, activation_seq=activation_seq + 1,
 activation_id=?1, activation_deadline_ms=NULL, charter_acked_epoch=NULL,
 blocked_reason=NULL, last_transition_ms=?2, last_reason='restart_reprobe_required',
 version=version + 1
 WHERE role_key_wire=?3 AND version=?4 AND epoch=?5";
const RECOVER_ORPHANED: &str = "UPDATE role_registry SET
 state='electable', epoch=epoch + 1, activation_seq=activation_seq + 1,
 activation_id=NULL, activation_deadline_ms=NULL, charter_acked_epoch=NULL,
 last_transition_ms=?1, last_reason='restart_activation_fenced', version=version + 1
 WHERE role_key_wire=?2 AND version=?3 AND epoch=?4";

/// `a ?? b()`
fn nn(a: Val, b: impl FnOnce() -> SResult<Val>) -> SResult<Val> {
    if a.nullish() {
        b()
    } else {
        Ok(a)
    }
}

fn prop(obj: &JsVal, key: &CStr) -> SResult<Val> {
    Val::from_js(obj.get(key)?)
}

/// Whether the value is one of the reachability states.
fn is_state(v: &Val) -> bool {
    STATES.iter().any(|st| v.is_str(st))
}

/// A role row, or `null`, spliced into a bigger document.
fn opt_row(d: &mut JsonOut, row: Option<&Row>) {
    match row {
        Some(r) => d.piece(&r.json()),
        None => d.null(),
    }
}

fn get_role_row(conn: &Connection, wire: &Bound) -> SResult<Option<Row>> {
    Ok(read_row(conn, GET_ROLE, &[Arg::Val(wire)], &RAW)?)
}

fn result(ok: bool, reason: Option<&str>, role: Option<&Row>) -> String {
    let mut d = JsonOut::new();
    d.raw(if ok { "{\"ok\":true" } else { "{\"ok\":false" });
    if let Some(r) = reason {
        d.raw(",\"reason\":\"");
        d.raw(r);
        d.raw("\"");
    }
    d.raw(",\"role\":");
    opt_row(&mut d, role);
    d.raw("}");
    d.finish()
}

/// The guard an attempt expected: version, epoch, activation_seq, activation_id.
struct Expected {
    version: Val,
    epoch: Val,
    activation_seq: Val,
    activation_id: Val,
}

/// `roleFailureReason(current, expected)` with strict comparisons.
fn failure_reason(current: Option<&Row>, e: &Expected) -> SResult<&'static str> {
    let Some(c) = current else {
        return Ok("not_found");
    };
    Ok(if !c.get("version").strict_eq(&e.version)? {
        "stale_version"
    } else if !c.get("epoch").strict_eq(&e.epoch)? {
        "stale_epoch"
    } else if !c.get("activation_seq").strict_eq(&e.activation_seq)? {
        "stale_activation_seq"
    } else if !c.get("activation_id").strict_eq(&e.activation_id)? {
        "stale_activation_id"
    } else {
        "cas_conflict"
    })
}

fn invalid_state(v8: &V8, state: &Val) -> SResult<StoreError> {
    let text = state.to_js_string(v8)?;
    Ok(StoreError::error(format!(
        "invalid role reachability state: {}",
        String::from_utf8_lossy(&text)
    )))
}

fn bind_run(conn: &Connection, sql: &str, values: &[Val]) -> SResult<usize> {
    let bound: Vec<Bound> = values.iter().map(|v| v.bound()).collect::<SResult<_>>()?;
    let mut stmt = exec::prepare(conn, sql)?;
    bind_all(&mut stmt, &bound)?;
    Ok(stmt.raw_execute()?)
}

#[napi]
impl NativeDb {
    #[napi]
    pub fn get_role(&self, env: Env, role_key_wire: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            exec::row_text(
                &core.conn,
                GET_ROLE,
                &[Arg::Val(&Bound::Text(role_key_wire.wtf8()?))],
                &RAW,
            )
        })
    }

    #[napi]
    pub fn upsert_role_reservation(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || reserve::reserve(&v8, conn, &input))
        })
    }

    #[napi]
    pub fn compare_and_set_role(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with_atomic(&env, |conn| cas::compare_and_set(&v8, conn, &input))
    }

    #[napi]
    pub fn list_role_keys(&self, env: Env, filter: JsVal) -> Result<String> {
        self.with(&env, |core| {
            // The original built `col=@col` clauses and `state IN (@state_0, …)` (array
            // holes leave empty slots, as `map().join()` does), prepared the text, then
            // bound a params object by name. Same text, same order of failures here.
            let mut clauses: Vec<String> = Vec::new();
            let mut named: Vec<(String, JsVal)> = Vec::new();
            for (key, name) in [
                (c"project_id", "project_id"),
                (c"role_kind", "role_kind"),
                (c"scope_id", "scope_id"),
                (c"state", "state"),
            ] {
                let v = filter.get(key)?;
                if !v.is_undefined() {
                    clauses.push(format!("{name}=@{name}"));
                    named.push((format!("@{name}"), v));
                }
            }
            let states = filter.get(c"states")?;
            if states.is_array()? && states.array_len()? > 0 {
                let n = states.array_len()?;
                let mut marks: Vec<String> = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let index = std::ffi::CString::new(i.to_string()).unwrap_or_default();
                    if states.has_own(&index)? {
                        marks.push(format!("@state_{i}"));
                        named.push((format!("@state_{i}"), states.element(i)?));
                    } else {
                        marks.push(String::new());
                    }
                }
                clauses.push(format!("state IN ({})", marks.join(",")));
            }
            let where_sql = if clauses.is_empty() {
                String::new()
            } else {
                format!(" WHERE {}", clauses.join(" AND "))
            };
            let sql = format!("SELECT role_key_wire FROM role_registry{where_sql} ORDER BY role_key_wire");
            let mut stmt = exec::prepare(&core.conn, &sql)?;
            let mut by_index: Vec<(usize, &JsVal)> = Vec::with_capacity(named.len());
            for (name, v) in &named {
                if let Some(index) = stmt.parameter_index(name)? {
                    by_index.push((index, v));
                }
            }
            by_index.sort_by_key(|(i, _)| *i);
            for (index, v) in by_index {
                stmt.raw_bind_parameter(index, bound_from_js(v)?)?;
            }
            let mut rows = stmt.raw_query();
            let mut out = JsonOut::new();
            out.raw("[");
            let mut first = true;
            while let Some(row) = rows.next()? {
                if !first {
                    out.raw(",");
                }
                first = false;
                out.value(row.get_ref(0)?);
            }
            out.raw("]");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn list_roles_with_expired_holder(&self, env: Env, now_ms: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(&core.conn, EXPIRED_HOLDERS, &[Arg::Js(now_ms)], &RAW)
        })
    }

    #[napi]
    pub fn list_role_candidates(&self, env: Env, role_key_wire: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            exec::rows_text(
                &core.conn,
                LIST_CANDIDATES,
                &[Arg::Val(&Bound::Text(role_key_wire.wtf8()?))],
                &CANDIDATE,
            )
        })
    }

    #[napi]
    pub fn upsert_role_candidate(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with_atomic(&env, |conn| candidates::upsert_candidate(&v8, conn, &input))
    }

    #[napi]
    pub fn update_candidate_reachability(&self, env: Env, input: JsVal) -> Result<String> {
        self.with_atomic(&env, |conn| candidates::update_reachability(conn, &input))
    }

    #[napi]
    pub fn list_pending_role_messages(&self, env: Env, role_key_wire: JsVal, now_ms: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            let wire = Bound::Text(role_key_wire.wtf8()?);
            crate::store::scale::tick_read(core, || {
                exec::rows_text(
                    &core.conn,
                    PENDING_MESSAGES,
                    &[Arg::Val(&wire), Arg::Js(now_ms)],
                    &MESSAGE,
                )
            })
        })
    }

    #[napi]
    pub fn recover_role_registry(&self, env: Env, now_ms: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || recover::recover(&v8, conn, &now_ms))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachability_states_are_exact() {
        assert!(is_state(&Val::text("active")));
        assert!(!is_state(&Val::text("Active")));
        assert!(!is_state(&Val::Num(1.0)));
    }
}
