//! Role registry (issue 4): reservations under BEGIN IMMEDIATE, compare-and-set with
//! activation guards, candidates and their reachability, pending role messages and the
//! restart recovery.
//!
//! The original computed every row value in JavaScript from the caller's input and the
//! current row, then bound it. `V` models those JS values (caller values, and column
//! values as better-sqlite3 returns them) so that `??`, `=== undefined`, `!==` and the
//! later binding behave exactly as they did.

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::js::bind::{bind_all, bound_from_js, Arg, Bound};
use crate::js::model::Val;
use crate::js::v8::{Compare, V8};
use crate::native_db::{now, NativeDb};
use crate::sqlite::error::{SResult, StoreError};
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::queries::{self as exec, read_row, read_rows, Row};
use crate::js::value::JsVal;
use crate::store::role_key::{decode, role_identity};
use crate::js::json_out::{JsonOut, CANDIDATE, MESSAGE, RAW};

const STATES: [&str; 5] = ["electable", "elected-probing", "active", "unreachable", "quarantined"];

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[CAS_ROLE, EXPIRED_HOLDERS, GET_CANDIDATE, GET_ROLE, INSERT_ROLE, LIST_CANDIDATES, LIST_ROLES, PENDING_MESSAGES, RECOVER_EXPIRED, RECOVER_LIVE, RECOVER_ORPHANED, UPDATE_REACHABILITY, UPDATE_RESERVATION, UPSERT_CANDIDATE];

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
    let Some(c) = current else { return Ok("not_found") };
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
    Ok(StoreError::error(format!("invalid role reachability state: {}", String::from_utf8_lossy(&text))))
}

fn bind_run(conn: &Connection, sql: &str, values: &[Val]) -> SResult<usize> {
    let bound: Vec<Bound> = values.iter().map(|v| v.bound()).collect::<SResult<_>>()?;
    let mut stmt = exec::prepare(conn, sql)?;
    bind_all(&mut stmt, &bound)?;
    Ok(stmt.raw_execute()?)
}

/// `a <= b` for a column value and a caller's value, evaluated by V8.
fn js_le(v8: &V8, a: &Val, b: &JsVal) -> SResult<bool> {
    v8.compare(Compare::Le, a.to_js(v8)?, b.raw())
}

#[napi]
impl NativeDb {
    #[napi]
    pub fn get_role(&self, env: Env, role_key_wire: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            let mut out = JsonOut::new();
            exec::get_json(&mut out, &core.conn, GET_ROLE, &[Bound::Text(role_key_wire.wtf8()?)], &RAW)?;
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn upsert_role_reservation(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || reserve(&v8, conn, &input))
        })
    }

    #[napi]
    pub fn compare_and_set_role(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with_atomic(&env, |conn| compare_and_set(&v8, conn, &input))
    }

    #[napi]
    pub fn list_role_keys(&self, env: Env, filter: JsVal) -> Result<String> {
        self.with(&env, |core| {
            // The original built `col=@col` clauses and `state IN (@state_0, …)` (array
            // holes leave empty slots, as `map().join()` does), prepared the text, then
            // bound a params object by name. Same text, same order of failures here.
            let mut clauses: Vec<String> = Vec::new();
            let mut named: Vec<(String, JsVal)> = Vec::new();
            for (key, name) in [(c"project_id", "project_id"), (c"role_kind", "role_kind"), (c"scope_id", "scope_id"), (c"state", "state")] {
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
            let where_sql = if clauses.is_empty() { String::new() } else { format!(" WHERE {}", clauses.join(" AND ")) };
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
            let mut out = JsonOut::new();
            exec::all_json_args(&mut out, &core.conn, EXPIRED_HOLDERS, &[Arg::Js(now_ms)], &RAW)?;
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn list_role_candidates(&self, env: Env, role_key_wire: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            let mut out = JsonOut::new();
            exec::all_json(&mut out, &core.conn, LIST_CANDIDATES, &[Bound::Text(role_key_wire.wtf8()?)], &CANDIDATE)?;
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn upsert_role_candidate(&self, env: Env, input: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with_atomic(&env, |conn| upsert_candidate(&v8, conn, &input))
    }

    #[napi]
    pub fn update_candidate_reachability(&self, env: Env, input: JsVal) -> Result<String> {
        self.with_atomic(&env, |conn| update_reachability(conn, &input))
    }

    #[napi]
    pub fn list_pending_role_messages(&self, env: Env, role_key_wire: JsVal, now_ms: JsVal) -> Result<String> {
        self.with(&env, |core| {
            decode(&role_key_wire)?;
            let wire = Bound::Text(role_key_wire.wtf8()?);
            let mut out = JsonOut::new();
            exec::all_json_args(&mut out, &core.conn, PENDING_MESSAGES, &[Arg::Val(&wire), Arg::Js(now_ms)], &MESSAGE)?;
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn recover_role_registry(&self, env: Env, now_ms: JsVal) -> Result<String> {
        let v8 = V8::new(&env);
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || recover(&v8, conn, &now_ms))
        })
    }
}

fn reserve(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let current = get_role_row(conn, &wire)?;
    let cur = |name: &str| current.as_ref().map(|c| c.get(name)).unwrap_or(Val::Undefined);
    let g = |key: &CStr| prop(input, key);

    let expected_version = nn(g(c"expected_version")?, || nn(g(c"expectedVersion")?, || Ok(cur("version"))))?;
    let expected_epoch = nn(g(c"expected_epoch")?, || nn(g(c"expectedEpoch")?, || Ok(cur("epoch"))))?;
    if let Some(c) = &current {
        if !expected_version.strict_eq(&c.get("version"))? {
            return Ok(result(false, Some("stale_version"), Some(c)));
        }
        if !expected_epoch.strict_eq(&c.get("epoch"))? {
            return Ok(result(false, Some("stale_epoch"), Some(c)));
        }
    }
    let next_epoch = nn(g(c"epoch")?, || {
        nn(g(c"next_epoch")?, || Ok(if current.is_some() { cur("epoch").plus_one()? } else { Val::Num(0.0) }))
    })?;
    if let Some(c) = &current {
        if !next_epoch.strict_eq(&c.get("epoch").plus_one()?)? {
            return Ok(result(false, Some("stale_epoch"), Some(c)));
        }
    }
    let next_seq = nn(g(c"activation_seq")?, || {
        nn(g(c"next_activation_seq")?, || {
            Ok(if current.is_some() { cur("activation_seq").plus_one()? } else { Val::Num(0.0) })
        })
    })?;
    if let Some(c) = &current {
        if !next_seq.strict_eq(&c.get("activation_seq").plus_one()?)? {
            return Ok(result(false, Some("stale_activation_seq"), Some(c)));
        }
    }

    let state_in = g(c"state")?;
    let state = if state_in.nullish() {
        let holder = g(c"holder_agent_id")?;
        Val::text(if holder.truthy() { "elected-probing" } else { "electable" })
    } else {
        state_in
    };
    if !is_state(&state) {
        return Err(invalid_state(v8, &state)?);
    }
    let holder = g(c"holder_agent_id")?;
    let holder_agent_id = nn(holder.clone(), || Ok(Val::Null))?;
    let previous_holder = nn(g(c"previous_holder_agent_id")?, || {
        let current_holder = cur("holder_agent_id");
        if !current_holder.strict_eq(&holder)? {
            nn(current_holder, || Ok(Val::Null))
        } else {
            nn(cur("previous_holder_agent_id"), || Ok(Val::Null))
        }
    })?;
    let activation_id = nn(g(c"activation_id")?, || {
        if holder.truthy() {
            Ok(Val::text(&crate::store::uuid7::next()))
        } else {
            nn(cur("activation_id"), || Ok(Val::Null))
        }
    })?;
    let keep = |key: &CStr, name: &str| -> SResult<Val> { nn(g(key)?, || nn(cur(name), || Ok(Val::Null))) };
    let deadline = keep(c"activation_deadline_ms", "activation_deadline_ms")?;
    let lease = keep(c"holder_lease_expires_ms", "holder_lease_expires_ms")?;
    let charter_version = keep(c"charter_version", "charter_version")?;
    let charter_acked = keep(c"charter_acked_epoch", "charter_acked_epoch")?;
    let retry_count = nn(g(c"retry_count")?, || nn(cur("retry_count"), || Ok(Val::Num(0.0))))?;
    let next_probe = keep(c"next_probe_ms", "next_probe_ms")?;
    let blocked_in = g(c"blocked_reason")?;
    let blocked = if blocked_in.is_undefined() { nn(cur("blocked_reason"), || Ok(Val::Null))? } else { blocked_in };
    let last_transition = nn(g(c"last_transition_ms")?, || Ok(Val::Num(now() as f64)))?;
    let last_reason = nn(g(c"last_reason")?, || Ok(Val::text("role_reserved")))?;

    match &current {
        None => {
            let wire_v = Val::Str(identity.wire.wtf8()?);
            let scope = identity.scope().to_string();
            bind_run(
                conn,
                INSERT_ROLE,
                &[
                    wire_v,
                    Val::text(&identity.key.project_id),
                    Val::text(identity.key.role_kind),
                    Val::text(&scope),
                    state,
                    holder_agent_id,
                    previous_holder,
                    next_epoch,
                    next_seq,
                    activation_id,
                    deadline,
                    lease,
                    charter_version,
                    charter_acked,
                    retry_count,
                    next_probe,
                    blocked,
                    last_transition,
                    last_reason,
                    Val::Num(0.0),
                ],
            )?;
        }
        Some(c) => {
            let changes = bind_run(
                conn,
                UPDATE_RESERVATION,
                &[
                    state,
                    holder_agent_id,
                    previous_holder,
                    next_epoch,
                    next_seq,
                    activation_id,
                    deadline,
                    lease,
                    charter_version,
                    charter_acked,
                    retry_count,
                    next_probe,
                    blocked,
                    last_transition,
                    last_reason,
                    Val::Str(identity.wire.wtf8()?),
                    c.get("version"),
                    c.get("epoch"),
                ],
            )?;
            if changes != 1 {
                let latest = get_role_row(conn, &wire)?;
                let expected = Expected {
                    version: c.get("version"),
                    epoch: c.get("epoch"),
                    activation_seq: c.get("activation_seq"),
                    activation_id: c.get("activation_id"),
                };
                return Ok(result(false, Some(failure_reason(latest.as_ref(), &expected)?), latest.as_ref()));
            }
        }
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}

fn compare_and_set(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let Some(current) = get_role_row(conn, &wire)? else {
        return Ok(result(false, Some("not_found"), None));
    };
    let has = |k: &CStr| input.has_own(k);
    let has_seq = has(c"expected_activation_seq")? || has(c"expectedActivationSeq")? || has(c"activation_seq")?;
    let has_id = has(c"expected_activation_id")? || has(c"expectedActivationId")? || has(c"activation_id")?;
    let g = |key: &CStr| prop(input, key);
    let expected = Expected {
        version: nn(g(c"expected_version")?, || nn(g(c"expectedVersion")?, || g(c"version")))?,
        epoch: nn(g(c"expected_epoch")?, || nn(g(c"expectedEpoch")?, || g(c"epoch")))?,
        activation_seq: nn(g(c"expected_activation_seq")?, || nn(g(c"expectedActivationSeq")?, || g(c"activation_seq")))?,
        activation_id: if has(c"expected_activation_id")? {
            g(c"expected_activation_id")?
        } else if has(c"expectedActivationId")? {
            g(c"expectedActivationId")?
        } else {
            g(c"activation_id")?
        },
    };
    if expected.version.nullish() || expected.epoch.nullish() || !has_seq || !has_id {
        return Ok(result(false, Some("invalid_cas"), Some(&current)));
    }
    let reason = failure_reason(Some(&current), &expected)?;
    if reason != "cas_conflict" {
        return Ok(result(false, Some(reason), Some(&current)));
    }

    let patch_in = input.get(c"patch")?;
    let patch = if patch_in.is_nullish() {
        let changes = input.get(c"changes")?;
        if changes.is_nullish() {
            None
        } else {
            Some(changes)
        }
    } else {
        Some(patch_in)
    };
    let p = |key: &CStr| -> SResult<Val> {
        match &patch {
            Some(obj) => prop(obj, key),
            None => Ok(Val::Undefined),
        }
    };
    let state = nn(p(c"state")?, || Ok(current.get("state")))?;
    if !is_state(&state) {
        return Err(invalid_state(v8, &state)?);
    }
    let patched = |key: &CStr, name: &str| -> SResult<Val> {
        let v = p(key)?;
        Ok(if v.is_undefined() { current.get(name) } else { v })
    };
    let holder = patched(c"holder_agent_id", "holder_agent_id")?;
    let previous = patched(c"previous_holder_agent_id", "previous_holder_agent_id")?;
    let activation_id = patched(c"activation_id", "activation_id")?;
    let deadline = patched(c"activation_deadline_ms", "activation_deadline_ms")?;
    let lease = patched(c"holder_lease_expires_ms", "holder_lease_expires_ms")?;
    let charter_version = patched(c"charter_version", "charter_version")?;
    let charter_acked = patched(c"charter_acked_epoch", "charter_acked_epoch")?;
    let retry_count = nn(p(c"retry_count")?, || Ok(current.get("retry_count")))?;
    let next_probe = patched(c"next_probe_ms", "next_probe_ms")?;
    let blocked = patched(c"blocked_reason", "blocked_reason")?;
    let last_transition = nn(p(c"last_transition_ms")?, || Ok(Val::Num(now() as f64)))?;
    let last_reason = nn(p(c"last_reason")?, || Ok(current.get("last_reason")))?;

    let changes = bind_run(
        conn,
        CAS_ROLE,
        &[
            state,
            holder,
            previous,
            activation_id,
            deadline,
            lease,
            charter_version,
            charter_acked,
            retry_count,
            next_probe,
            blocked,
            last_transition,
            last_reason,
            Val::Str(identity.wire.wtf8()?),
            expected.epoch.clone(),
            expected.activation_seq.clone(),
            expected.activation_id.clone(),
            expected.version.clone(),
        ],
    )?;
    if changes != 1 {
        let latest = get_role_row(conn, &wire)?;
        return Ok(result(false, Some(failure_reason(latest.as_ref(), &expected)?), latest.as_ref()));
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}

fn upsert_candidate(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let agent = input.get(c"agent_id")?;
    let current = read_row(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)?;
    let cur = |name: &str| current.as_ref().map(|c| c.get(name)).unwrap_or(Val::Undefined);
    let g = |key: &CStr| prop(input, key);

    let source = nn(g(c"source")?, || nn(cur("source"), || Ok(Val::text("operator"))))?;
    let priority = nn(g(c"priority")?, || nn(cur("priority"), || Ok(Val::Num(0.0))))?;
    let locators_in = input.get(c"transport_locators")?;
    let locators = if locators_in.is_nullish() {
        // JSON.stringify(parseJson(stored, [])): a stored 'null' writes "null".
        let text = v8.reparse(cur("transport_locators_json").as_column(), "[]")?;
        Val::Str(text.unwrap_or_else(|| b"null".to_vec()))
    } else {
        v8.stringify(locators_in.raw())?.map(Val::Str).unwrap_or(Val::Undefined)
    };
    let failures = nn(g(c"consecutive_probe_failures")?, || nn(cur("consecutive_probe_failures"), || Ok(Val::Num(0.0))))?;
    let kept = |key: &CStr, name: &str| -> SResult<Val> {
        let v = g(key)?;
        if v.is_undefined() {
            nn(cur(name), || Ok(Val::Null))
        } else {
            Ok(v)
        }
    };
    let excluded = kept(c"excluded_until_ms", "excluded_until_ms")?;
    let last_probe = kept(c"last_probe_ms", "last_probe_ms")?;
    let last_code = kept(c"last_probe_code", "last_probe_code")?;
    let updated = nn(g(c"updated_at_ms")?, || Ok(Val::Num(now() as f64)))?;
    bind_run(
        conn,
        UPSERT_CANDIDATE,
        &[Val::Str(identity.wire.wtf8()?), Val::from_js(agent)?, source, priority, locators, failures, excluded, last_probe, last_code, updated],
    )?;
    let mut out = JsonOut::new();
    exec::get_json_args(&mut out, conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)?;
    Ok(out.finish())
}

fn update_reachability(conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let agent = input.get(c"agent_id")?;
    let Some(current) = read_row(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)? else {
        return Ok("{\"ok\":false,\"reason\":\"not_found\"}".into());
    };
    let g = |key: &CStr| prop(input, key);
    let mut failures = nn(g(c"consecutive_probe_failures")?, || Ok(current.get("consecutive_probe_failures")))?;
    if input.get(c"probe_failed")?.is_true() || input.get(c"increment_probe_failures")?.is_true() {
        failures = current.get("consecutive_probe_failures").plus_one()?;
    } else if input.get(c"probe_succeeded")?.is_true() {
        failures = Val::Num(0.0);
    }
    let excluded_in = g(c"excluded_until_ms")?;
    let excluded = if excluded_in.is_undefined() { current.get("excluded_until_ms") } else { excluded_in };
    // Two separate Date.now() calls in the original.
    let last_probe = nn(g(c"last_probe_ms")?, || Ok(Val::Num(now() as f64)))?;
    let code_in = g(c"last_probe_code")?;
    let last_code = if code_in.is_undefined() { current.get("last_probe_code") } else { code_in };
    let updated = nn(g(c"updated_at_ms")?, || Ok(Val::Num(now() as f64)))?;
    bind_run(
        conn,
        UPDATE_REACHABILITY,
        &[failures, excluded, last_probe, last_code, updated, Val::Str(identity.wire.wtf8()?), Val::from_js(agent)?],
    )?;
    let fresh = read_row(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)?;
    let mut d = JsonOut::new();
    d.raw("{\"ok\":true,\"candidate\":");
    opt_row(&mut d, fresh.as_ref());
    d.raw("}");
    Ok(d.finish())
}

fn recover(v8: &V8, conn: &Connection, now_ms: &JsVal) -> SResult<String> {
    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, None)?;
    for role in &roles {
        let wire = role.get("role_key_wire");
        let holder = role.get("holder_agent_id");
        let guard = [wire, role.get("version"), role.get("epoch")];
        if holder.truthy() {
            let lease = role.get("holder_lease_expires_ms");
            if lease.nullish() || js_le(v8, &lease, now_ms)? {
                let mut values = vec![Val::from_js(*now_ms)?];
                values.extend(guard);
                bind_run(conn, RECOVER_EXPIRED, &values)?;
            } else {
                let mut values = vec![Val::text(&crate::store::uuid7::next()), Val::from_js(*now_ms)?];
                values.extend(guard);
                bind_run(conn, RECOVER_LIVE, &values)?;
            }
        } else if role.get("activation_id").truthy() || role.get("state").strict_eq(&Val::text("elected-probing"))? {
            let mut values = vec![Val::from_js(*now_ms)?];
            values.extend(guard);
            bind_run(conn, RECOVER_ORPHANED, &values)?;
        }
    }

    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, None)?;
    let mut d = JsonOut::new();
    d.raw("{\"roles\":[");
    for (i, r) in roles.iter().enumerate() {
        if i > 0 {
            d.raw(",");
        }
        d.piece(&r.json());
    }
    d.raw("],\"candidates\":[");
    let mut first = true;
    for r in &roles {
        let wire = r.get("role_key_wire").bound()?;
        for c in read_rows(conn, LIST_CANDIDATES, &[Arg::Val(&wire)], &CANDIDATE, None)? {
            if !first {
                d.raw(",");
            }
            first = false;
            d.piece(&c.json());
        }
    }
    d.raw("],\"pending_messages\":[");
    let mut first = true;
    for r in &roles {
        let wire = r.get("role_key_wire").bound()?;
        for m in read_rows(conn, PENDING_MESSAGES, &[Arg::Val(&wire), Arg::Js(*now_ms)], &MESSAGE, None)? {
            if !first {
                d.raw(",");
            }
            first = false;
            d.piece(&m.json());
        }
    }
    d.raw("]}");
    Ok(d.finish())
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
