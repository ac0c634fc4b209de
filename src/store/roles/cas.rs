//! compareAndSetRole: the guard the caller expected (version, epoch, activation sequence
//! and id), then the patch written under that guard.

use std::ffi::CStr;

use rusqlite::Connection;

use crate::js::bind::Bound;
use crate::js::model::Val;
use crate::js::v8::V8;
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;
use crate::store::now;
use crate::store::queries::Row;
use crate::store::role_key::role_identity;

use super::{bind_run, failure_reason, get_role_row, invalid_state, is_state, nn, prop, result, Expected, CAS_ROLE};

/// The guard the caller expected, or None when it is incomplete (`invalid_cas`).
fn expected_guard(input: &JsVal) -> SResult<Option<Expected>> {
    let has = |k: &CStr| input.has_own(k);
    let has_seq = has(c"expected_activation_seq")? || has(c"expectedActivationSeq")? || has(c"activation_seq")?;
    let has_id = has(c"expected_activation_id")? || has(c"expectedActivationId")? || has(c"activation_id")?;
    let g = |key: &CStr| prop(input, key);
    let expected = Expected {
        version: nn(g(c"expected_version")?, || nn(g(c"expectedVersion")?, || g(c"version")))?,
        epoch: nn(g(c"expected_epoch")?, || nn(g(c"expectedEpoch")?, || g(c"epoch")))?,
        activation_seq: nn(g(c"expected_activation_seq")?, || {
            nn(g(c"expectedActivationSeq")?, || g(c"activation_seq"))
        })?,
        activation_id: if has(c"expected_activation_id")? {
            g(c"expected_activation_id")?
        } else if has(c"expectedActivationId")? {
            g(c"expectedActivationId")?
        } else {
            g(c"activation_id")?
        },
    };
    let complete = !expected.version.nullish() && !expected.epoch.nullish() && has_seq && has_id;
    Ok(complete.then_some(expected))
}

/// `input.patch ?? input.changes ?? {}` (None standing for the empty object).
fn patch_of(input: &JsVal) -> SResult<Option<JsVal>> {
    let patch = input.get(c"patch")?;
    if !patch.is_nullish() {
        return Ok(Some(patch));
    }
    let changes = input.get(c"changes")?;
    Ok(if changes.is_nullish() { None } else { Some(changes) })
}

/// The patched role fields in CAS_ROLE's column order (state through last_reason).
fn patched_fields(v8: &V8, patch: Option<&JsVal>, current: &Row) -> SResult<Vec<Val>> {
    let p = |key: &CStr| -> SResult<Val> {
        match patch {
            Some(obj) => prop(obj, key),
            None => Ok(Val::Undefined),
        }
    };
    let state = nn(p(c"state")?, || Ok(current.get("state")))?;
    if !is_state(&state) {
        return Err(invalid_state(v8, &state)?);
    }
    // `patch.x === undefined ? current.x : patch.x`
    let patched = |key: &CStr, name: &str| -> SResult<Val> {
        let v = p(key)?;
        Ok(if v.is_undefined() { current.get(name) } else { v })
    };
    Ok(vec![
        state,
        patched(c"holder_agent_id", "holder_agent_id")?,
        patched(c"previous_holder_agent_id", "previous_holder_agent_id")?,
        patched(c"activation_id", "activation_id")?,
        patched(c"activation_deadline_ms", "activation_deadline_ms")?,
        patched(c"holder_lease_expires_ms", "holder_lease_expires_ms")?,
        patched(c"charter_version", "charter_version")?,
        patched(c"charter_acked_epoch", "charter_acked_epoch")?,
        nn(p(c"retry_count")?, || Ok(current.get("retry_count")))?,
        patched(c"next_probe_ms", "next_probe_ms")?,
        patched(c"blocked_reason", "blocked_reason")?,
        nn(p(c"last_transition_ms")?, || Ok(Val::Num(now() as f64)))?,
        nn(p(c"last_reason")?, || Ok(current.get("last_reason")))?,
    ])
}

pub(super) fn compare_and_set(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let Some(current) = get_role_row(conn, &wire)? else {
        return Ok(result(false, Some("not_found"), None));
    };
    let Some(expected) = expected_guard(input)? else {
        return Ok(result(false, Some("invalid_cas"), Some(&current)));
    };
    let reason = failure_reason(Some(&current), &expected)?;
    if reason != "cas_conflict" {
        return Ok(result(false, Some(reason), Some(&current)));
    }
    let patch = patch_of(input)?;
    let mut values = patched_fields(v8, patch.as_ref(), &current)?;
    values.extend([
        Val::Str(identity.wire.wtf8()?),
        expected.epoch.clone(),
        expected.activation_seq.clone(),
        expected.activation_id.clone(),
        expected.version.clone(),
    ]);
    if bind_run(conn, CAS_ROLE, &values)? != 1 {
        let latest = get_role_row(conn, &wire)?;
        return Ok(result(
            false,
            Some(failure_reason(latest.as_ref(), &expected)?),
            latest.as_ref(),
        ));
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}
