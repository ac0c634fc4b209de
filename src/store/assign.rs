//! Assign jobs (issue 3): createAssign, getAssign, updateAssignStatus, listAssigns, retryAssign.
//!
//! Every field rule of the original lives here (`||` / `??` / `Object.hasOwn`, the
//! `Number(x)` clamps, deadlines). The listeners live in the glue: update and retry
//! return the row prefixed with `C` (status changed: notify) or `U` (unchanged).

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::js::bind::{bound_from_js, Arg, Bound};
use crate::js::calc::{clamp, clamp_finite};
use crate::js::json_out::{ASSIGN, RAW};
use crate::js::model::{coalesce, Val};
use crate::js::protocol::flag_row;
use crate::js::throw::Throw;
use crate::js::v8::V8;
use crate::js::value::{js_input, JsVal};
use crate::native_db::NativeDb;
use crate::sqlite::error::SResult;
use crate::store::now;
use crate::store::queries::{self as exec, read_row, Row};

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[GET_ASSIGN, INSERT_ASSIGN, UPDATE_ASSIGN];

const GET_ASSIGN: &str = "SELECT * FROM assign_jobs WHERE job_id = ?";
const INSERT_ASSIGN: &str = "INSERT INTO assign_jobs (
 job_id, supervisor_agent, worker_agent, topic, task, payload_json,
 status, attempt, retry_count, max_retries, priority, ttl_ms, timeout_ms, deadline_ms,
 trace_id, correlation_id, last_message_id, result_json, error_json,
 created_at_ms, updated_at_ms, started_at_ms, dispatched_at_ms, completed_at_ms, last_retry_at_ms
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)";
const UPDATE_ASSIGN: &str = "UPDATE assign_jobs SET
 supervisor_agent=?1, worker_agent=?2, topic=?3, task=?4, payload_json=?5, status=?6,
 attempt=?7, retry_count=?8, max_retries=?9, priority=?10, ttl_ms=?11, timeout_ms=?12,
 deadline_ms=?13, trace_id=?14, correlation_id=?15, last_message_id=?16, result_json=?17,
 error_json=?18, updated_at_ms=?19, started_at_ms=?20, dispatched_at_ms=?21,
 completed_at_ms=?22, last_retry_at_ms=?23
 WHERE job_id=?24";

const DEFAULT_TIMEOUT_MS: f64 = 600_000.0;
const TERMINAL: [&str; 3] = ["succeeded", "failed", "timed_out"];

fn is_terminal(status: &Val) -> bool {
    TERMINAL.iter().any(|s| status.is_str(s))
}

fn clamp_duration(v: &Val, fallback: Val) -> SResult<Val> {
    clamp(v, fallback, 1000.0, 86_400_000.0)
}

/// `Math.max(lo, x)` with JS NaN propagation.
fn js_max(lo: f64, x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x > lo {
        x
    } else {
        lo
    }
}

/// The `patch` object of updateAssignStatus: a caller's object, or the one retryAssign builds.
enum Patch<'a> {
    Js(JsVal),
    Retry(&'a [(&'static str, Val)]),
}

impl Patch<'_> {
    fn get(&self, key: &CStr) -> SResult<Val> {
        match self {
            Patch::Js(v) => Val::from_js(v.get(key)?),
            Patch::Retry(fields) => {
                let k = key.to_str().unwrap_or("");
                Ok(fields
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or(Val::Undefined))
            }
        }
    }
    fn has_own(&self, key: &CStr) -> SResult<bool> {
        match self {
            Patch::Js(v) => v.has_own(key),
            Patch::Retry(fields) => {
                let k = key.to_str().unwrap_or("");
                Ok(fields.iter().any(|(n, _)| *n == k))
            }
        }
    }
}

/// `x == null ? null : JSON.stringify(x)`
fn stringify_or_null(js: &V8, v: &Val) -> SResult<Bound> {
    if v.nullish() {
        return Ok(Bound::Null);
    }
    Ok(Bound::json(v.stringify(js)?))
}

fn write_assign(conn: &rusqlite::Connection, id: &Bound) -> SResult<String> {
    exec::row_text(conn, GET_ASSIGN, &[Arg::Val(id)], &ASSIGN)
}

/// What updateAssignStatus computes its row from: the current row, the patch, the clock
/// and the next status. Each method is one field of the original's object literal; the
/// caller calls them in that literal's order, so getters run in the original's order.
struct Update<'a> {
    js: &'a V8,
    cur: &'a Row,
    patch: &'a Patch<'a>,
    now: i64,
    status: Val,
    terminal: bool,
}

impl Update<'_> {
    /// `patch.x ?? current.x`
    fn patched(&self, key: &CStr, col: &str) -> SResult<Val> {
        Ok(coalesce(self.patch.get(key)?, || self.cur.get(col)))
    }

    /// `Object.hasOwn(patch, x) ? patch.x : current.x`
    fn own_or_current(&self, key: &CStr, col: &str) -> SResult<Val> {
        if self.patch.has_own(key)? {
            self.patch.get(key)
        } else {
            Ok(self.cur.get(col))
        }
    }

    /// `Object.hasOwn(patch, x) ? patch.x : stamp ? current.x || now : current.x`
    fn stamped(&self, key: &CStr, col: &str, stamp: bool) -> SResult<Val> {
        if self.patch.has_own(key)? {
            return self.patch.get(key);
        }
        let current = self.cur.get(col);
        Ok(if stamp && !current.truthy() {
            Val::Num(self.now as f64)
        } else {
            current
        })
    }

    /// `JSON.stringify(patch.payload ?? current.payload ?? {})`
    fn payload_json(&self) -> SResult<Bound> {
        let patched = self.patch.get(c"payload")?;
        Ok(Bound::json(if patched.nullish() {
            Some(
                self.js
                    .reparse(self.cur.get("payload_json").as_column(), "{}")?
                    .unwrap_or_else(|| b"{}".to_vec()),
            )
        } else {
            patched.stringify(self.js)?
        }))
    }

    /// `hasOwn(patch, x) ? (patch.x == null ? null : JSON.stringify(patch.x))` else the
    /// current parsed value stringified again.
    fn json_field(&self, key: &CStr, col: &str) -> SResult<Bound> {
        if self.patch.has_own(key)? {
            stringify_or_null(self.js, &self.patch.get(key)?)
        } else {
            Ok(Bound::json(self.js.reparse(self.cur.get(col).as_column(), "null")?))
        }
    }

    /// `Math.max(1, Number(patch.attempt ?? current.attempt) || current.attempt || 1)`
    fn attempt(&self) -> SResult<Bound> {
        let current = self.cur.get("attempt");
        let a = coalesce(self.patch.get(c"attempt")?, || current.clone()).number()?;
        let a = if !(a == 0.0 || a.is_nan()) {
            a
        } else if current.truthy() {
            current.number()?
        } else {
            1.0
        };
        Ok(Bound::num(js_max(1.0, a)))
    }

    /// `Math.max(0, Number(patch.x ?? current.x) || 0)`
    fn count(&self, key: &CStr, col: &str) -> SResult<Bound> {
        let n = self.patched(key, col)?.number()?;
        Ok(Bound::num(js_max(0.0, if n == 0.0 || n.is_nan() { 0.0 } else { n })))
    }

    /// `clampPriority(patch.priority ?? current.priority, current.priority || 5)`
    fn priority(&self) -> SResult<Bound> {
        let current = self.cur.get("priority");
        let fallback = if current.truthy() {
            current.clone()
        } else {
            Val::Num(5.0)
        };
        clamp(&self.patched(c"priority", "priority")?, fallback, 1.0, 9.0)?.bound()
    }

    /// `clampDurationMs(patch.ttl_ms ?? current.ttl_ms, current.ttl_ms || nextTimeout)`
    fn ttl(&self, timeout: &Val) -> SResult<Bound> {
        let current = self.cur.get("ttl_ms");
        let fallback = if current.truthy() { current } else { timeout.clone() };
        clamp_duration(&self.patched(c"ttl_ms", "ttl_ms")?, fallback)?.bound()
    }

    /// The deadline rule: an own `deadline_ms` wins (truncated), a terminal status
    /// clears it, starting to run without one sets `now + timeout`.
    fn deadline(&self, timeout: &Val) -> SResult<Bound> {
        if self.patch.has_own(c"deadline_ms")? {
            let d = self.patch.get(c"deadline_ms")?;
            return if d.nullish() {
                Ok(Bound::Null)
            } else {
                Ok(Bound::num(d.number()?.trunc()))
            };
        }
        if self.terminal {
            Ok(Bound::Null)
        } else if self.status.is_str("running") && !self.cur.get("deadline_ms").truthy() {
            now_plus(self.now, timeout)?.bound()
        } else {
            self.cur.get("deadline_ms").bound()
        }
    }
}

/// updateAssignStatus on an existing row (`current`), returning the flagged row.
fn update_existing(conn: &Connection, js: &V8, cur: &Row, status: &Val, patch: &Patch<'_>) -> SResult<Option<String>> {
    let now = now();
    let status = if status.truthy() {
        status.clone()
    } else {
        cur.get("status")
    };
    let terminal = is_terminal(&status);
    let running = status.is_str("running");
    let u = Update {
        js,
        cur,
        patch,
        now,
        status,
        terminal,
    };
    let current_timeout = cur.get("timeout_ms");
    let timeout = clamp_duration(&u.patched(c"timeout_ms", "timeout_ms")?, current_timeout)?;
    let job_id = cur.get("job_id").bound()?;
    let params = [
        u.patched(c"supervisor_agent", "supervisor_agent")?.bound()?,
        u.patched(c"worker_agent", "worker_agent")?.bound()?,
        u.patched(c"topic", "topic")?.bound()?,
        u.patched(c"task", "task")?.bound()?,
        u.payload_json()?,
        u.status.bound()?,
        u.attempt()?,
        u.count(c"retry_count", "retry_count")?,
        u.count(c"max_retries", "max_retries")?,
        u.priority()?,
        u.ttl(&timeout)?,
        timeout.bound()?,
        u.deadline(&timeout)?,
        u.patched(c"trace_id", "trace_id")?.bound()?,
        u.patched(c"correlation_id", "correlation_id")?.bound()?,
        u.own_or_current(c"last_message_id", "last_message_id")?.bound()?,
        u.json_field(c"result", "result_json")?,
        u.json_field(c"error", "error_json")?,
        Bound::num(now as f64),
        u.stamped(c"started_at_ms", "started_at_ms", running)?.bound()?,
        u.own_or_current(c"dispatched_at_ms", "dispatched_at_ms")?.bound()?,
        u.stamped(c"completed_at_ms", "completed_at_ms", terminal)?.bound()?,
        u.own_or_current(c"last_retry_at_ms", "last_retry_at_ms")?.bound()?,
        job_id.clone(),
    ];
    exec::run(conn, UPDATE_ASSIGN, &params)?;

    // Re-read once: the row for the caller and `current.status !== updated.status`.
    let Some(updated) = read_row(conn, GET_ASSIGN, &[Arg::Val(&job_id)], &ASSIGN)? else {
        return Ok(None);
    };
    let changed = !updated.get("status").strict_eq(&cur.get("status"))?;
    Ok(Some(flag_row(changed, &updated.json())))
}

js_input!(
    /// createAssign's destructured parameters, defaults applied by the glue.
    #[derive(Clone, Copy)]
    CreateAssignInput { job_id, supervisor_agent, worker_agent, topic, task, payload, status, attempt, retry_count, max_retries, priority, ttl_ms, timeout_ms, deadline_ms, dispatched_at_ms, trace_id, correlation_id, last_message_id, result, error }
);

/// createAssign's row (the INSERT's parameters) and its job id, each field computed as
/// the original's object literal did, in its order.
fn assign_row(js: &V8, now: i64, input: CreateAssignInput) -> SResult<(Bound, Vec<Bound>)> {
    let CreateAssignInput {
        job_id,
        supervisor_agent,
        worker_agent,
        topic,
        task,
        payload,
        status,
        attempt,
        retry_count,
        max_retries,
        priority,
        ttl_ms,
        timeout_ms,
        deadline_ms,
        dispatched_at_ms,
        trace_id,
        correlation_id,
        last_message_id,
        result,
        error,
    } = input;
    let t = clamp_duration(&Val::from_js(timeout_ms)?, Val::Num(DEFAULT_TIMEOUT_MS))?;
    let id = if job_id.truthy() {
        bound_from_js(&job_id)
    } else {
        Ok(Bound::text(&crate::store::uuid7::next()))
    };
    // String(x): V8's own, so a Symbol topic is stored as "Symbol(desc)".
    let topic_b = if topic.truthy() {
        Bound::Text(js.string_of_js(&topic)?)
    } else {
        Bound::text("assign.job")
    };
    let task_b = if task.truthy() {
        Bound::Text(js.string_of_js(&task)?)
    } else {
        Bound::text("")
    };
    let payload_b = if payload.truthy() {
        Bound::json(js.stringify(payload.raw())?)
    } else {
        Bound::text("{}")
    };
    let num_or = |v: &JsVal, d: f64| -> SResult<f64> {
        let n = v.number_of()?;
        Ok(if n == 0.0 || n.is_nan() { d } else { n })
    };
    let attempt_n = js_max(1.0, num_or(&attempt, 1.0)?);
    let retry_n = js_max(0.0, num_or(&retry_count, 0.0)?);
    let max_retries_n = js_max(0.0, num_or(&max_retries, 0.0)?);
    let priority_v = clamp(&Val::from_js(priority)?, Val::Num(5.0), 1.0, 9.0)?;
    let ttl_v = clamp_duration(&Val::from_js(ttl_ms)?, t.clone())?;
    // Number(deadline_ms) runs twice when finite, as in the original (a valueOf sees both).
    let deadline_v = if deadline_ms.number_of()?.is_finite() {
        Val::Num(deadline_ms.number_of()?.trunc())
    } else {
        now_plus(now, &t)?
    };
    let trace_b = if trace_id.truthy() {
        bound_from_js(&trace_id)
    } else {
        Ok(Bound::text(&crate::store::uuid7::next()))
    };
    let corr_b = if correlation_id.truthy() {
        bound_from_js(&correlation_id)
    } else {
        Ok(Bound::text(&crate::store::uuid7::next()))
    };
    let result_b = stringify_or_null(&js, &Val::from_js(result)?)?;
    let error_b = stringify_or_null(&js, &Val::from_js(error)?)?;
    let st = Val::from_js(status)?;
    let started = if st.is_str("running") {
        Bound::num(now as f64)
    } else {
        Bound::Null
    };
    let dispatched = if dispatched_at_ms.is_nullish() || !dispatched_at_ms.number_of()?.is_finite() {
        Bound::Null
    } else {
        Bound::num(dispatched_at_ms.number_of()?.trunc())
    };
    let completed = if is_terminal(&st) {
        Bound::num(now as f64)
    } else {
        Bound::Null
    };
    // `retry_count > 0`: Number(x) > 0 has the same answer, BigInt included.
    let last_retry = if retry_count.number_of()? > 0.0 {
        Bound::num(now as f64)
    } else {
        Bound::Null
    };
    // Named binding happens in parameter order, after the row is built.
    let id = id?;
    let params = [
        id.clone(),
        bound_from_js(&supervisor_agent)?,
        bound_from_js(&worker_agent)?,
        topic_b,
        task_b,
        payload_b,
        st.bound()?,
        Bound::num(attempt_n),
        Bound::num(retry_n),
        Bound::num(max_retries_n),
        priority_v.bound()?,
        ttl_v.bound()?,
        t.bound()?,
        deadline_v.bound()?,
        trace_b?,
        corr_b?,
        bound_from_js(&last_message_id)?,
        result_b,
        error_b,
        Bound::num(now as f64),
        Bound::num(now as f64),
        started,
        dispatched,
        completed,
        last_retry,
    ];
    Ok((id, params.to_vec()))
}

js_input!(
    /// listAssigns' filters, defaults applied by the glue.
    ListAssignsInput { supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit }
);

#[napi]
impl NativeDb {
    /// createAssign: the row values of the original, one INSERT, then the row.
    #[napi]
    pub fn create_assign(&self, env: Env, input: JsVal) -> Result<String> {
        let js = V8::new(&env);
        self.with_atomic(&env, |conn| {
            let input = CreateAssignInput::read(&input)?;
            let (id, params) = assign_row(&js, now(), input)?;
            exec::run(conn, INSERT_ASSIGN, &params)?;
            write_assign(conn, &id)
        })
    }

    #[napi]
    pub fn get_assign(&self, env: Env, job_id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(&core.conn, GET_ASSIGN, &[Arg::Js(job_id)], &ASSIGN)
        })
    }

    /// updateAssignStatus: null for a missing job, else `C`/`U` + the row.
    #[napi]
    pub fn update_assign_status(&self, env: Env, job_id: JsVal, status: JsVal, patch: JsVal) -> Result<Option<String>> {
        let js = V8::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_row(conn, GET_ASSIGN, &[Arg::Js(job_id)], &RAW)? else {
                return Ok(None);
            };
            update_existing(conn, &js, &cur, &Val::from_js(status)?, &Patch::Js(patch))
        })
    }

    /// retryAssign: the original's patch, then updateAssignStatus(job, "queued", patch).
    #[napi]
    pub fn retry_assign(&self, env: Env, job_id: JsVal, patch: JsVal) -> Result<Option<String>> {
        let js = V8::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_row(conn, GET_ASSIGN, &[Arg::Js(job_id)], &RAW)? else {
                return Ok(None);
            };
            let retry_plus = cur.get("retry_count").plus_one()?;
            let rc = coalesce(Val::from_js(patch.get(c"retry_count")?)?, || retry_plus).number()?;
            let next_retry = js_max(0.0, if rc == 0.0 || rc.is_nan() { 0.0 } else { rc });
            let cur_attempt_plus = cur.get("attempt").plus_one()?;
            let a = coalesce(Val::from_js(patch.get(c"attempt")?)?, || cur_attempt_plus.clone()).number()?;
            let a = if a == 0.0 || a.is_nan() { 1.0 } else { a };
            // Math.max(current.attempt + 1, a)
            let lo = cur_attempt_plus.number()?;
            let next_attempt = if lo.is_nan() || a.is_nan() { f64::NAN } else { lo.max(a) };
            let cur_timeout = cur.get("timeout_ms");
            let t = clamp_duration(
                &coalesce(Val::from_js(patch.get(c"timeout_ms")?)?, || cur_timeout.clone()),
                cur_timeout.clone(),
            )?;
            let ttl = coalesce(Val::from_js(patch.get(c"ttl_ms")?)?, || cur.get("ttl_ms"));
            let now = now();
            let deadline = now_plus(now, &t)?;
            let result = coalesce(Val::from_js(patch.get(c"result")?)?, || Val::Null);
            let error = if patch.has_own(c"error")? {
                Val::from_js(patch.get(c"error")?)?
            } else {
                Val::from_json(js.reparse(cur.get("error_json").as_column(), "null")?)
            };
            let fields: [(&'static str, Val); 12] = [
                ("retry_count", Val::Num(next_retry)),
                ("attempt", Val::Num(next_attempt)),
                ("timeout_ms", t),
                ("ttl_ms", ttl),
                ("deadline_ms", deadline),
                ("completed_at_ms", Val::Null),
                ("started_at_ms", Val::Null),
                ("dispatched_at_ms", Val::Null),
                ("last_retry_at_ms", Val::Num(now as f64)),
                ("result", result),
                ("error", error),
                ("last_message_id", Val::Null),
            ];
            update_existing(conn, &js, &cur, &Val::Str(b"queued".to_vec()), &Patch::Retry(&fields))
        })
    }

    /// listAssigns: WHERE from the truthy filters (bound values only).
    #[napi]
    pub fn list_assigns(&self, env: Env, input: JsVal) -> Result<String> {
        let ListAssignsInput {
            supervisor_agent,
            worker_agent,
            status,
            statuses,
            trace_id,
            correlation_id,
            active_before_ms,
            limit,
        } = ListAssignsInput::read(&input).map_err(|e| e.throw(env.raw()))?;
        self.with(&env, |core| {
            let mut clauses: Vec<String> = Vec::new();
            let mut values: Vec<Arg<'_>> = Vec::new();
            for (v, col) in [
                (&supervisor_agent, "supervisor_agent"),
                (&worker_agent, "worker_agent"),
                (&trace_id, "trace_id"),
                (&correlation_id, "correlation_id"),
            ] {
                if v.truthy() {
                    clauses.push(format!("{col} = ?"));
                    values.push(Arg::Js(*v));
                }
            }
            let mut status_list: Vec<JsVal> = Vec::new();
            if statuses.is_array()? && statuses.array_len()? > 0 {
                for i in 0..statuses.array_len()? {
                    status_list.push(statuses.element(i)?);
                }
            } else if status.truthy() {
                status_list.push(status);
            }
            if !status_list.is_empty() {
                let marks = vec!["?"; status_list.len()].join(",");
                clauses.push(format!("status IN ({marks})"));
                values.extend(status_list.into_iter().map(Arg::Js));
            }
            let active = active_before_ms.number_of()?;
            let active_b = Bound::num(active.trunc());
            if active.is_finite() {
                clauses.push("deadline_ms IS NOT NULL AND deadline_ms <= ?".to_string());
                values.push(Arg::Val(&active_b));
            }
            let lim = limit.number_of()?;
            let lim_b = Bound::num(clamp_finite(lim, 50.0, 1.0, 100.0));
            values.push(Arg::Val(&lim_b));
            let where_sql = if clauses.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", clauses.join(" AND "))
            };
            let sql = format!("SELECT * FROM assign_jobs {where_sql} ORDER BY updated_at_ms DESC LIMIT ?");
            exec::rows_text(&core.conn, &sql, &values, &ASSIGN)
        })
    }
}

/// `now + x` (JS `+`): numeric, or string concatenation when the timeout read back from
/// the row is text.
fn now_plus(now: i64, x: &Val) -> SResult<Val> {
    Ok(match x {
        Val::Str(t) => {
            let mut s = itoa::Buffer::new().format(now).as_bytes().to_vec();
            s.extend_from_slice(t);
            Val::Str(s)
        }
        other => Val::Num(now as f64 + other.number()?),
    })
}
