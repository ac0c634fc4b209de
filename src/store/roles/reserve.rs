//! upsertRoleReservation: the next generation of a role (epoch, activation sequence)
//! checked against what the caller expected, then the reservation row inserted or
//! updated under the version/epoch guard.

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

use super::{
    bind_run, failure_reason, get_role_row, invalid_state, is_state, nn, prop, result, Expected, INSERT_ROLE,
    UPDATE_RESERVATION,
};

/// The epoch and activation sequence a reservation moves to, or the reason the caller's
/// expectation is stale.
fn next_generation(input: &JsVal, current: Option<&Row>) -> SResult<Result<(Val, Val), &'static str>> {
    let cur = |name: &str| current.map(|c| c.get(name)).unwrap_or(Val::Undefined);
    let g = |key: &CStr| prop(input, key);
    let expected_version = nn(g(c"expected_version")?, || {
        nn(g(c"expectedVersion")?, || Ok(cur("version")))
    })?;
    let expected_epoch = nn(g(c"expected_epoch")?, || nn(g(c"expectedEpoch")?, || Ok(cur("epoch"))))?;
    if let Some(c) = current {
        if !expected_version.strict_eq(&c.get("version"))? {
            return Ok(Err("stale_version"));
        }
        if !expected_epoch.strict_eq(&c.get("epoch"))? {
            return Ok(Err("stale_epoch"));
        }
    }
    let next_epoch = nn(g(c"epoch")?, || {
        nn(g(c"next_epoch")?, || {
            Ok(if current.is_some() {
                cur("epoch").plus_one()?
            } else {
                Val::Num(0.0)
            })
        })
    })?;
    if let Some(c) = current {
        if !next_epoch.strict_eq(&c.get("epoch").plus_one()?)? {
            return Ok(Err("stale_epoch"));
        }
    }
    let next_seq = nn(g(c"activation_seq")?, || {
        nn(g(c"next_activation_seq")?, || {
            Ok(if current.is_some() {
                cur("activation_seq").plus_one()?
            } else {
                Val::Num(0.0)
            })
        })
    })?;
    if let Some(c) = current {
        if !next_seq.strict_eq(&c.get("activation_seq").plus_one()?)? {
            return Ok(Err("stale_activation_seq"));
        }
    }
    Ok(Ok((next_epoch, next_seq)))
}

/// The reservation's state (validated) and holder fields: state, holder, previous holder.
fn holder_fields(v8: &V8, input: &JsVal, current: Option<&Row>) -> SResult<[Val; 3]> {
    let cur = |name: &str| current.map(|c| c.get(name)).unwrap_or(Val::Undefined);
    let g = |key: &CStr| prop(input, key);
    let state_in = g(c"state")?;
    let state = if state_in.nullish() {
        let holder = g(c"holder_agent_id")?;
        Val::text(if holder.truthy() {
            "elected-probing"
        } else {
            "electable"
        })
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
    Ok([state, holder_agent_id, previous_holder])
}

/// The reservation's remaining fields, activation_id through last_reason: the caller's
/// value, else the current one, else the default.
fn activation_fields(input: &JsVal, current: Option<&Row>) -> SResult<[Val; 10]> {
    let cur = |name: &str| current.map(|c| c.get(name)).unwrap_or(Val::Undefined);
    let g = |key: &CStr| prop(input, key);
    let holder = g(c"holder_agent_id")?;
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
    let blocked = if blocked_in.is_undefined() {
        nn(cur("blocked_reason"), || Ok(Val::Null))?
    } else {
        blocked_in
    };
    let last_transition = nn(g(c"last_transition_ms")?, || Ok(Val::Num(now() as f64)))?;
    let last_reason = nn(g(c"last_reason")?, || Ok(Val::text("role_reserved")))?;
    Ok([
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
    ])
}

pub(super) fn reserve(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let current = get_role_row(conn, &wire)?;
    let (next_epoch, next_seq) = match next_generation(input, current.as_ref())? {
        Ok(next) => next,
        Err(reason) => return Ok(result(false, Some(reason), current.as_ref())),
    };
    let [state, holder, previous] = holder_fields(v8, input, current.as_ref())?;
    let rest = activation_fields(input, current.as_ref())?;
    // The row in the statements' column order: state, holders, epoch, seq, the rest.
    let mut row = vec![state, holder, previous, next_epoch, next_seq];
    row.extend(rest);
    match &current {
        None => {
            let mut values = vec![
                Val::Str(identity.wire.wtf8()?),
                Val::text(&identity.key.project_id),
                Val::text(identity.key.role_kind),
                Val::text(identity.scope()),
            ];
            values.extend(row);
            values.push(Val::Num(0.0));
            bind_run(conn, INSERT_ROLE, &values)?;
        }
        Some(c) => {
            row.extend([Val::Str(identity.wire.wtf8()?), c.get("version"), c.get("epoch")]);
            if bind_run(conn, UPDATE_RESERVATION, &row)? != 1 {
                let latest = get_role_row(conn, &wire)?;
                let expected = Expected {
                    version: c.get("version"),
                    epoch: c.get("epoch"),
                    activation_seq: c.get("activation_seq"),
                    activation_id: c.get("activation_id"),
                };
                return Ok(result(
                    false,
                    Some(failure_reason(latest.as_ref(), &expected)?),
                    latest.as_ref(),
                ));
            }
        }
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}
