//! Role candidates: the upsert (caller values over the current row) and the probe
//! reachability update.

use std::ffi::CStr;

use rusqlite::Connection;

use crate::js::bind::Bound;
use crate::js::model::Val;
use crate::js::v8::V8;
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;
use crate::store::now;
use crate::store::role_key::role_identity;

use crate::js::bind::Arg;
use crate::js::json_out::{JsonOut, CANDIDATE};
use crate::store::queries::{self as exec, read_row};

use super::{bind_run, nn, opt_row, prop, GET_CANDIDATE, UPDATE_REACHABILITY, UPSERT_CANDIDATE};

pub(super) fn upsert_candidate(v8: &V8, conn: &Connection, input: &JsVal) -> SResult<String> {
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
    let failures = nn(g(c"consecutive_probe_failures")?, || {
        nn(cur("consecutive_probe_failures"), || Ok(Val::Num(0.0)))
    })?;
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
        &[
            Val::Str(identity.wire.wtf8()?),
            Val::from_js(agent)?,
            source,
            priority,
            locators,
            failures,
            excluded,
            last_probe,
            last_code,
            updated,
        ],
    )?;
    exec::row_text(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)
}

pub(super) fn update_reachability(conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let agent = input.get(c"agent_id")?;
    let Some(current) = read_row(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)? else {
        return Ok("{\"ok\":false,\"reason\":\"not_found\"}".into());
    };
    let g = |key: &CStr| prop(input, key);
    let mut failures = nn(g(c"consecutive_probe_failures")?, || {
        Ok(current.get("consecutive_probe_failures"))
    })?;
    if input.get(c"probe_failed")?.is_true() || input.get(c"increment_probe_failures")?.is_true() {
        failures = current.get("consecutive_probe_failures").plus_one()?;
    } else if input.get(c"probe_succeeded")?.is_true() {
        failures = Val::Num(0.0);
    }
    let excluded_in = g(c"excluded_until_ms")?;
    let excluded = if excluded_in.is_undefined() {
        current.get("excluded_until_ms")
    } else {
        excluded_in
    };
    // Two separate Date.now() calls in the original.
    let last_probe = nn(g(c"last_probe_ms")?, || Ok(Val::Num(now() as f64)))?;
    let code_in = g(c"last_probe_code")?;
    let last_code = if code_in.is_undefined() {
        current.get("last_probe_code")
    } else {
        code_in
    };
    let updated = nn(g(c"updated_at_ms")?, || Ok(Val::Num(now() as f64)))?;
    bind_run(
        conn,
        UPDATE_REACHABILITY,
        &[
            failures,
            excluded,
            last_probe,
            last_code,
            updated,
            Val::Str(identity.wire.wtf8()?),
            Val::from_js(agent)?,
        ],
    )?;
    let fresh = read_row(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)?;
    let mut d = JsonOut::new();
    d.raw("{\"ok\":true,\"candidate\":");
    opt_row(&mut d, fresh.as_ref());
    d.raw("}");
    Ok(d.finish())
}
