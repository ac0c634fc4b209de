//! Human-in-the-loop requests.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::js::bind::{bound_from_js, Arg, Bound};
use crate::js::json_out::{JsonOut, HUMAN_REQUEST};
use crate::js::throw::Throw;
use crate::js::value::{js_input, JsVal};
use crate::native_db::NativeDb;
use crate::store::now;
use crate::store::queries as exec;
use crate::store::uuid7::or_new_id;

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[INSERT_HUMAN_REQUEST];

const INSERT_HUMAN_REQUEST: &str = "INSERT INTO human_requests (request_id, requester_agent, kind, prompt, schema_json, state, deadline_ms, default_action, correlation_id, trace_id, response_json)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

js_input!(
    /// insertHumanRequest's fields, with `deadline_at = now + deadline_ms` from the glue.
    HumanRequestInput { requester_agent, kind, prompt, schema_json, deadline_at, default_action, correlation_id, trace_id }
);

#[napi]
impl NativeDb {
    /// insertHumanRequest: the glue computes `now + deadline_ms` with JS's `+`.
    #[napi]
    pub fn insert_human_request(&self, env: Env, input: JsVal, now: f64) -> Result<String> {
        let HumanRequestInput {
            requester_agent,
            kind,
            prompt,
            schema_json,
            deadline_at,
            default_action,
            correlation_id,
            trace_id,
        } = HumanRequestInput::read(&input).map_err(|e| e.throw(env.raw()))?;
        self.with(&env, |core| {
            let request_id = crate::store::uuid7::next();
            let _ = now; // the clock of the call; `deadline_at` is `now + deadline_ms` in JS
            let params = [
                Bound::text(&request_id),
                bound_from_js(&requester_agent)?,
                bound_from_js(&kind)?,
                bound_from_js(&prompt)?,
                bound_from_js(&schema_json)?,
                Bound::text("pending"),
                bound_from_js(&deadline_at)?,
                bound_from_js(&default_action)?,
                or_new_id(&correlation_id)?.0,
                or_new_id(&trace_id)?.0,
                Bound::Null,
            ];
            exec::run(&core.conn, INSERT_HUMAN_REQUEST, &params)?;
            let mut out = JsonOut::new();
            out.raw("{\"request_id\":");
            out.str(&request_id);
            // deadline_ms is the caller-side `now + deadline_ms`, set by the glue.
            out.raw(",\"state\":\"pending\",\"deadline_ms\":null}");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn get_human_request(&self, env: Env, id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(
                &core.conn,
                "SELECT * FROM human_requests WHERE request_id=?",
                &[Arg::Js(id)],
                &HUMAN_REQUEST,
            )
        })
    }

    /// `response_json` is the stringified response, or null for a falsy response (the
    /// glue applies the original's `resp ? JSON.stringify(resp) : null`).
    #[napi]
    pub fn update_human_request(&self, env: Env, id: JsVal, state: JsVal, response_json: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            let n = exec::run_args(
                &core.conn,
                "UPDATE human_requests SET state=?, response_json=? WHERE request_id=?",
                &[Arg::Js(state), Arg::Js(response_json), Arg::Js(id)],
            )?;
            Ok(n > 0)
        })
    }

    #[napi]
    pub fn get_pending_human_requests(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(
                &core.conn,
                "SELECT * FROM human_requests WHERE state='pending'",
                &[],
                &HUMAN_REQUEST,
            )
        })
    }

    #[napi]
    pub fn expire_human_requests(&self, env: Env) -> Result<u32> {
        self.with(&env, |core| Ok(expire_human_requests(&core.conn, now())? as u32))
    }
}

pub fn expire_human_requests(conn: &rusqlite::Connection, now: i64) -> crate::sqlite::error::SResult<usize> {
    exec::run(
        conn,
        "UPDATE human_requests SET state='timed_out' WHERE state='pending' AND deadline_ms < ?",
        &[Bound::num(now as f64)],
    )
}
