//! Human-in-the-loop requests.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::js::bind::{bound_from_js, Arg, Bound};
use crate::native_db::{now, NativeDb};
use crate::store::queries as exec;
use crate::js::calc::{add_to_now, or_new_id};
use crate::js::value::JsVal;
use crate::js::json_out::{JsonOut, HUMAN_REQUEST};

const INSERT_HUMAN_REQUEST: &str = "INSERT INTO human_requests (request_id, requester_agent, kind, prompt, schema_json, state, deadline_ms, default_action, correlation_id, trace_id, response_json)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

#[napi]
impl NativeDb {
    /// insertHumanRequest: `deadline_ms` is a duration from now.
    #[napi]
    pub fn insert_human_request(
        &self,
        env: Env,
        requester_agent: JsVal,
        kind: JsVal,
        prompt: JsVal,
        schema_json: JsVal,
        deadline_ms: JsVal,
        default_action: JsVal,
        correlation_id: JsVal,
        trace_id: JsVal,
    ) -> Result<String> {
        self.with(&env, |core| {
            let request_id = crate::store::uuid7::next();
            let now = now();
            let deadline = add_to_now(now, &deadline_ms)?;
            let params = [
                Bound::text(&request_id),
                bound_from_js(&requester_agent)?,
                bound_from_js(&kind)?,
                bound_from_js(&prompt)?,
                bound_from_js(&schema_json)?,
                Bound::text("pending"),
                deadline.bound(),
                bound_from_js(&default_action)?,
                or_new_id(&correlation_id)?.0,
                or_new_id(&trace_id)?.0,
                Bound::Null,
            ];
            exec::run(&core.conn, INSERT_HUMAN_REQUEST, &params)?;
            let mut out = JsonOut::new();
            out.raw("{\"request_id\":");
            out.str(&request_id);
            out.raw(",\"state\":\"pending\",\"deadline_ms\":");
            deadline.write(&mut out);
            out.raw("}");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn get_human_request(&self, env: Env, id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(&core.conn, "SELECT * FROM human_requests WHERE request_id=?", &[Arg::Js(id)], &HUMAN_REQUEST)
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
            exec::rows_text(&core.conn, "SELECT * FROM human_requests WHERE state='pending'", &[], &HUMAN_REQUEST)
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
