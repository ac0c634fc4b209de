//! Assign jobs (issue 3): createAssign, getAssign, updateAssignStatus, listAssigns, retryAssign.
//!
//! Every field rule of the original lives here (`||` / `??` / `Object.hasOwn`, the
//! `Number(x)` clamps, deadlines). The listeners live in the glue: update and retry
//! return the row prefixed with `C` (status changed: notify) or `U` (unchanged).

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::js::bind::{apply, bind_all, bind_args, bound_from_js, col_bound, Arg, Bound};
use crate::native_db::{now, NativeDb};
use crate::sqlite::error::SResult;
use crate::store::queries as exec;
use crate::js::calc::clamp_finite;
use crate::js::value::JsVal;
use crate::js::protocol::flag_row;
use crate::js::json_out::{value_truthy, write_row, JsonOut, ASSIGN};
pub(crate) use crate::js::v8json::Js;

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

// ---------------------------------------------------------------------------
// JS operations on values the store computes with (shared with reflexion.rs).
// ---------------------------------------------------------------------------

/// A JS value as the original held it while building a row: a caller's value, a
/// number it computed, a column value read back through better-sqlite3, or a parsed
/// stored JSON value (kept as the text `JSON.stringify` would give it; None = null).
#[derive(Clone)]
pub(crate) enum PV {
    Undef,
    Null,
    Num(f64),
    Js(JsVal),
    Col(Value),
    Json(Option<Vec<u8>>),
    Text(Vec<u8>),
}

impl PV {
    /// `x == null`
    pub fn nullish(&self) -> bool {
        match self {
            PV::Undef | PV::Null | PV::Json(None) => true,
            PV::Col(Value::Null) => true,
            PV::Js(v) => v.is_nullish(),
            _ => false,
        }
    }

    /// JS ToBoolean.
    pub fn truthy(&self) -> bool {
        match self {
            PV::Undef | PV::Null | PV::Json(None) => false,
            PV::Num(n) => !(*n == 0.0 || n.is_nan()),
            PV::Js(v) => v.truthy(),
            PV::Col(v) => value_truthy(ValueRef::from(v)),
            PV::Json(Some(t)) => !matches!(t.as_slice(), b"0" | b"false" | b"\"\"" | b"-0"),
            PV::Text(t) => !t.is_empty(),
        }
    }

    /// `Number(x)`.
    pub fn number(&self) -> SResult<f64> {
        Ok(match self {
            PV::Undef => f64::NAN,
            PV::Null | PV::Json(None) => 0.0,
            PV::Num(n) => *n,
            PV::Js(v) => js_number(v)?,
            PV::Col(v) => col_number(ValueRef::from(v)),
            PV::Json(Some(_)) => f64::NAN,
            PV::Text(t) => str_to_number(&String::from_utf8_lossy(t)),
        })
    }

    /// The value bound as better-sqlite3 would bind the JS value.
    pub fn bound(&self) -> SResult<Bound> {
        Ok(match self {
            PV::Undef | PV::Null | PV::Json(None) => Bound::Null,
            PV::Num(n) => Bound::num(*n),
            PV::Js(v) => bound_from_js(v)?,
            PV::Col(v) => col_bound(ValueRef::from(v)),
            PV::Json(Some(t)) | PV::Text(t) => Bound::Text(t.clone()),
        })
    }

    /// `x === "s"`
    pub fn is_str(&self, s: &str) -> SResult<bool> {
        Ok(match self {
            PV::Js(v) => v.is_string() && v.wtf8()? == s.as_bytes(),
            PV::Col(Value::Text(t)) => t == s,
            PV::Text(t) => t == s.as_bytes(),
            _ => false,
        })
    }

    fn is_terminal(&self) -> SResult<bool> {
        for s in TERMINAL {
            if self.is_str(s)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `JSON.stringify(x)` (None when it gives undefined).
    pub fn stringify(&self, js: &Js) -> SResult<Option<Vec<u8>>> {
        match self {
            PV::Undef => Ok(None),
            PV::Null | PV::Json(None) | PV::Col(Value::Null) => Ok(Some(b"null".to_vec())),
            PV::Json(Some(t)) => Ok(Some(t.clone())),
            PV::Js(v) => js.stringify(v.raw()),
            PV::Num(n) => js.stringify(js.double(*n)),
            PV::Col(Value::Integer(i)) => js.stringify(js.double(*i as f64)),
            PV::Col(Value::Real(f)) => js.stringify(js.double(*f)),
            PV::Col(Value::Text(t)) => js.stringify(js.string(t)),
            PV::Col(Value::Blob(_)) => Ok(Some(b"{\"type\":\"Buffer\"}".to_vec())),
            PV::Text(t) => js.stringify(js.string(&String::from_utf8_lossy(t))),
        }
    }
}

/// `Number(column value)` as better-sqlite3 returns it.
pub(crate) fn col_number(v: ValueRef<'_>) -> f64 {
    match v {
        ValueRef::Null => 0.0,
        ValueRef::Integer(i) => i as f64,
        ValueRef::Real(f) => f,
        ValueRef::Text(t) => str_to_number(&String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => str_to_number(&String::from_utf8_lossy(b)),
    }
}

/// `Number(x)` for a JS value (BigInt converts, unlike unary plus).
pub(crate) fn js_number(v: &JsVal) -> SResult<f64> {
    if v.is_bigint() {
        let mut sign = 0i32;
        let mut count = 0usize;
        unsafe {
            sys::napi_get_value_bigint_words(v.env(), v.raw(), &mut sign, &mut count, std::ptr::null_mut())
        };
        let mut words = vec![0u64; count.max(1)];
        unsafe {
            sys::napi_get_value_bigint_words(v.env(), v.raw(), &mut sign, &mut count, words.as_mut_ptr())
        };
        let mut f = 0f64;
        for w in words.iter().take(count).rev() {
            f = f * 18446744073709551616.0 + *w as f64;
        }
        return Ok(if sign != 0 { -f } else { f });
    }
    v.to_number()
}

/// JS StringToNumber.
pub(crate) fn str_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let radix = |p: &str, r: u32| -> Option<f64> {
        let d = t.strip_prefix(p).or_else(|| t.strip_prefix(&p.to_uppercase()))?;
        if d.is_empty() || !d.chars().all(|c| c.is_digit(r)) {
            return Some(f64::NAN);
        }
        Some(d.chars().fold(0f64, |acc, c| acc * r as f64 + c.to_digit(r).unwrap() as f64))
    };
    for (p, r) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(v) = radix(p, r) {
            return v;
        }
    }
    // Decimal literal: [+-] (digits [. digits] | . digits) [e [+-] digits]
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return f64::NAN;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return f64::NAN;
        }
    }
    if i != b.len() {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `clampDurationMs(v, fb)` / `clampPriority(v, fb)`: the fallback is returned as given.
fn clamp_pv(v: &PV, fallback: PV, min: f64, max: f64) -> SResult<PV> {
    let n = v.number()?;
    if !n.is_finite() {
        return Ok(fallback);
    }
    Ok(PV::Num(clamp_finite(n, 0.0, min, max)))
}

fn clamp_duration(v: &PV, fallback: PV) -> SResult<PV> {
    clamp_pv(v, fallback, 1000.0, 86_400_000.0)
}

/// `a ?? b`
fn coalesce(a: PV, b: impl FnOnce() -> PV) -> PV {
    if a.nullish() {
        b()
    } else {
        a
    }
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

/// `x + 1` (JS `+`) on a column value.
fn col_plus_one(v: &Value) -> PV {
    match v {
        Value::Text(t) => PV::Text(format!("{t}1").into_bytes()),
        Value::Blob(b) => PV::Text(format!("{}1", String::from_utf8_lossy(b)).into_bytes()),
        other => PV::Num(col_number(ValueRef::from(other)) + 1.0),
    }
}

/// `now + x` (JS `+`) where x is a number or a stored value.
fn now_plus(now: i64, x: &PV) -> PV {
    match x {
        PV::Col(Value::Text(t)) => PV::Text(format!("{now}{t}").into_bytes()),
        PV::Text(t) => PV::Text(format!("{now}{}", String::from_utf8_lossy(t)).into_bytes()),
        other => PV::Num(now as f64 + other.number().unwrap_or(f64::NAN)),
    }
}

// ---------------------------------------------------------------------------
// The current row and patches.
// ---------------------------------------------------------------------------

pub(crate) struct Cur {
    cols: Vec<(String, Value)>,
}

impl Cur {
    pub fn val(&self, name: &str) -> Value {
        self.cols.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or(Value::Null)
    }
    pub fn pv(&self, name: &str) -> PV {
        PV::Col(self.val(name))
    }
}

/// `SELECT ... WHERE key = ?` bound with the caller's value (better-sqlite3 rules).
pub(crate) fn read_current(conn: &rusqlite::Connection, sql: &str, id: JsVal) -> SResult<Option<Cur>> {
    let mut stmt = exec::prepare(conn, sql)?;
    let values = bind_args(&stmt, &[Arg::Js(id)])?;
    apply(&mut stmt, &values)?;
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let mut rows = stmt.raw_query();
    match rows.next()? {
        None => Ok(None),
        Some(row) => {
            let mut cols = Vec::with_capacity(names.len());
            for (i, name) in names.into_iter().enumerate() {
                cols.push((name, row.get::<_, Value>(i)?));
            }
            Ok(Some(Cur { cols }))
        }
    }
}

/// The `patch` object of updateAssignStatus: a caller's object, or the one retryAssign builds.
enum Patch<'a> {
    Js(JsVal),
    Retry(&'a [(&'static str, PV)]),
}

impl Patch<'_> {
    fn get(&self, key: &CStr) -> SResult<PV> {
        match self {
            Patch::Js(v) => Ok(PV::Js(v.get(key)?)),
            Patch::Retry(fields) => {
                let k = key.to_str().unwrap_or("");
                Ok(fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()).unwrap_or(PV::Undef))
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

fn json_pv(v: Option<Vec<u8>>) -> Bound {
    match v {
        Some(t) => Bound::Text(t),
        None => Bound::Null,
    }
}

/// `x == null ? null : JSON.stringify(x)`
fn stringify_or_null(js: &Js, v: &PV) -> SResult<Bound> {
    if v.nullish() {
        return Ok(Bound::Null);
    }
    Ok(json_pv(v.stringify(js)?))
}

fn write_assign(conn: &rusqlite::Connection, id: &Bound) -> SResult<String> {
    let mut out = JsonOut::new();
    exec::get_json(&mut out, conn, GET_ASSIGN, std::slice::from_ref(id), &ASSIGN)?;
    Ok(out.finish())
}

/// updateAssignStatus on an existing row (`current`), returning the flagged row.
fn update_existing(
    conn: &Connection,
    js: &Js,
    cur: &Cur,
    status: &PV,
    patch: &Patch<'_>,
) -> SResult<Option<String>> {
    let now = now();
    let next_status = if status.truthy() { status.clone() } else { cur.pv("status") };
    let terminal = next_status.is_terminal()?;
    let cur_timeout = cur.pv("timeout_ms");
    let t = clamp_duration(&coalesce(patch.get(c"timeout_ms")?, || cur_timeout.clone()), cur_timeout.clone())?;

    let supervisor = coalesce(patch.get(c"supervisor_agent")?, || cur.pv("supervisor_agent"));
    let worker = coalesce(patch.get(c"worker_agent")?, || cur.pv("worker_agent"));
    let topic = coalesce(patch.get(c"topic")?, || cur.pv("topic"));
    let task = coalesce(patch.get(c"task")?, || cur.pv("task"));
    let payload_patch = patch.get(c"payload")?;
    let payload_json = if payload_patch.nullish() {
        // JSON.stringify(current.payload ?? {})
        Some(js.reparse(ValueRef::from(&cur.val("payload_json")), "{}")?.unwrap_or_else(|| b"{}".to_vec()))
    } else {
        payload_patch.stringify(js)?
    };

    let cur_attempt = cur.pv("attempt");
    let a = coalesce(patch.get(c"attempt")?, || cur_attempt.clone()).number()?;
    let attempt = if !(a == 0.0 || a.is_nan()) {
        a
    } else if cur_attempt.truthy() {
        cur_attempt.number()?
    } else {
        1.0
    };
    let attempt = js_max(1.0, attempt);
    let rc = coalesce(patch.get(c"retry_count")?, || cur.pv("retry_count")).number()?;
    let retry_count = js_max(0.0, if rc == 0.0 || rc.is_nan() { 0.0 } else { rc });
    let mr = coalesce(patch.get(c"max_retries")?, || cur.pv("max_retries")).number()?;
    let max_retries = js_max(0.0, if mr == 0.0 || mr.is_nan() { 0.0 } else { mr });
    let cur_priority = cur.pv("priority");
    let pfb = if cur_priority.truthy() { cur_priority.clone() } else { PV::Num(5.0) };
    let priority = clamp_pv(&coalesce(patch.get(c"priority")?, || cur_priority.clone()), pfb, 1.0, 9.0)?;
    let cur_ttl = cur.pv("ttl_ms");
    let tfb = if cur_ttl.truthy() { cur_ttl.clone() } else { t.clone() };
    let ttl = clamp_duration(&coalesce(patch.get(c"ttl_ms")?, || cur_ttl.clone()), tfb)?;

    let deadline = if patch.has_own(c"deadline_ms")? {
        let d = patch.get(c"deadline_ms")?;
        if d.nullish() {
            PV::Null
        } else {
            PV::Num(d.number()?.trunc())
        }
    } else if terminal {
        PV::Null
    } else if next_status.is_str("running")? && !cur.pv("deadline_ms").truthy() {
        now_plus(now, &t)
    } else {
        cur.pv("deadline_ms")
    };
    let trace_id = coalesce(patch.get(c"trace_id")?, || cur.pv("trace_id"));
    let correlation_id = coalesce(patch.get(c"correlation_id")?, || cur.pv("correlation_id"));
    let last_message_id =
        if patch.has_own(c"last_message_id")? { patch.get(c"last_message_id")? } else { cur.pv("last_message_id") };
    let result_json = if patch.has_own(c"result")? {
        stringify_or_null(js, &patch.get(c"result")?)?
    } else {
        json_pv(js.reparse(ValueRef::from(&cur.val("result_json")), "null")?)
    };
    let error_json = if patch.has_own(c"error")? {
        stringify_or_null(js, &patch.get(c"error")?)?
    } else {
        json_pv(js.reparse(ValueRef::from(&cur.val("error_json")), "null")?)
    };
    let started = if patch.has_own(c"started_at_ms")? {
        patch.get(c"started_at_ms")?
    } else if next_status.is_str("running")? {
        let s = cur.pv("started_at_ms");
        if s.truthy() {
            s
        } else {
            PV::Num(now as f64)
        }
    } else {
        cur.pv("started_at_ms")
    };
    let dispatched =
        if patch.has_own(c"dispatched_at_ms")? { patch.get(c"dispatched_at_ms")? } else { cur.pv("dispatched_at_ms") };
    let completed = if patch.has_own(c"completed_at_ms")? {
        patch.get(c"completed_at_ms")?
    } else if terminal {
        let s = cur.pv("completed_at_ms");
        if s.truthy() {
            s
        } else {
            PV::Num(now as f64)
        }
    } else {
        cur.pv("completed_at_ms")
    };
    let last_retry =
        if patch.has_own(c"last_retry_at_ms")? { patch.get(c"last_retry_at_ms")? } else { cur.pv("last_retry_at_ms") };

    let job_id = col_bound(ValueRef::from(&cur.val("job_id")));
    let params = [
        supervisor.bound()?,
        worker.bound()?,
        topic.bound()?,
        task.bound()?,
        json_pv(payload_json),
        next_status.bound()?,
        Bound::num(attempt),
        Bound::num(retry_count),
        Bound::num(max_retries),
        priority.bound()?,
        ttl.bound()?,
        t.bound()?,
        deadline.bound()?,
        trace_id.bound()?,
        correlation_id.bound()?,
        last_message_id.bound()?,
        result_json,
        error_json,
        Bound::num(now as f64),
        started.bound()?,
        dispatched.bound()?,
        completed.bound()?,
        last_retry.bound()?,
        job_id.clone(),
    ];
    exec::run(conn, UPDATE_ASSIGN, &params)?;

    // Re-read once: the row for the caller and `current.status !== updated.status`.
    let mut stmt = exec::prepare(conn, GET_ASSIGN)?;
    bind_all(&mut stmt, std::slice::from_ref(&job_id))?;
    let mut rows = stmt.raw_query();
    let Some(row) = rows.next()? else { return Ok(None) };
    let changed = row.get::<_, Value>("status")? != cur.val("status");
    let mut out = JsonOut::new();
    write_row(&mut out, row, &ASSIGN)?;
    Ok(Some(flag_row(changed, &out.finish())))
}

#[napi]
impl NativeDb {
    /// createAssign: the row values of the original, one INSERT, then the row.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn create_assign(
        &self,
        env: Env,
        job_id: JsVal,
        supervisor_agent: JsVal,
        worker_agent: JsVal,
        topic: JsVal,
        task: JsVal,
        payload: JsVal,
        status: JsVal,
        attempt: JsVal,
        retry_count: JsVal,
        max_retries: JsVal,
        priority: JsVal,
        ttl_ms: JsVal,
        timeout_ms: JsVal,
        deadline_ms: JsVal,
        dispatched_at_ms: JsVal,
        trace_id: JsVal,
        correlation_id: JsVal,
        last_message_id: JsVal,
        result: JsVal,
        error: JsVal,
    ) -> Result<String> {
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| {
            let now = now();
            let t = clamp_duration(&PV::Js(timeout_ms), PV::Num(DEFAULT_TIMEOUT_MS))?;
            let id = if job_id.truthy() { bound_from_js(&job_id) } else { Ok(Bound::text(&crate::store::uuid7::next())) };
            let topic_b = if topic.truthy() { Bound::Text(topic.to_js_string()?) } else { Bound::text("assign.job") };
            let task_b = if task.truthy() { Bound::Text(task.to_js_string()?) } else { Bound::text("") };
            let payload_b = if payload.truthy() { json_pv(js.stringify(payload.raw())?) } else { Bound::text("{}") };
            let num_or = |v: &JsVal, d: f64| -> SResult<f64> {
                let n = js_number(v)?;
                Ok(if n == 0.0 || n.is_nan() { d } else { n })
            };
            let attempt_n = js_max(1.0, num_or(&attempt, 1.0)?);
            let retry_n = js_max(0.0, num_or(&retry_count, 0.0)?);
            let max_retries_n = js_max(0.0, num_or(&max_retries, 0.0)?);
            let priority_v = clamp_pv(&PV::Js(priority), PV::Num(5.0), 1.0, 9.0)?;
            let ttl_v = clamp_duration(&PV::Js(ttl_ms), t.clone())?;
            let d = js_number(&deadline_ms)?;
            let deadline_v = if d.is_finite() { PV::Num(d.trunc()) } else { now_plus(now, &t) };
            let trace_b = if trace_id.truthy() { bound_from_js(&trace_id) } else { Ok(Bound::text(&crate::store::uuid7::next())) };
            let corr_b =
                if correlation_id.truthy() { bound_from_js(&correlation_id) } else { Ok(Bound::text(&crate::store::uuid7::next())) };
            let result_b = stringify_or_null(&js, &PV::Js(result))?;
            let error_b = stringify_or_null(&js, &PV::Js(error))?;
            let st = PV::Js(status);
            let started = if st.is_str("running")? { Bound::num(now as f64) } else { Bound::Null };
            let dispatched = if dispatched_at_ms.is_nullish() {
                Bound::Null
            } else {
                let n = js_number(&dispatched_at_ms)?;
                if n.is_finite() {
                    Bound::num(n.trunc())
                } else {
                    Bound::Null
                }
            };
            let completed = if st.is_terminal()? { Bound::num(now as f64) } else { Bound::Null };
            let retried = if retry_count.is_bigint() {
                let v = retry_count.bigint_i64().map_or(0, |(v, _)| v);
                v > 0 || js_number(&retry_count)? > 0.0
            } else {
                js_number(&retry_count)? > 0.0
            };
            let last_retry = if retried { Bound::num(now as f64) } else { Bound::Null };
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
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_current(conn, GET_ASSIGN, job_id)? else { return Ok(None) };
            update_existing(conn, &js, &cur, &PV::Js(status), &Patch::Js(patch))
        })
    }

    /// retryAssign: the original's patch, then updateAssignStatus(job, "queued", patch).
    #[napi]
    pub fn retry_assign(&self, env: Env, job_id: JsVal, patch: JsVal) -> Result<Option<String>> {
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_current(conn, GET_ASSIGN, job_id)? else { return Ok(None) };
            let rc = coalesce(PV::Js(patch.get(c"retry_count")?), || col_plus_one(&cur.val("retry_count"))).number()?;
            let next_retry = js_max(0.0, if rc == 0.0 || rc.is_nan() { 0.0 } else { rc });
            let cur_attempt_plus = col_plus_one(&cur.val("attempt"));
            let a = coalesce(PV::Js(patch.get(c"attempt")?), || cur_attempt_plus.clone()).number()?;
            let a = if a == 0.0 || a.is_nan() { 1.0 } else { a };
            // Math.max(current.attempt + 1, a)
            let lo = cur_attempt_plus.number()?;
            let next_attempt = if lo.is_nan() || a.is_nan() { f64::NAN } else { lo.max(a) };
            let cur_timeout = cur.pv("timeout_ms");
            let t = clamp_duration(&coalesce(PV::Js(patch.get(c"timeout_ms")?), || cur_timeout.clone()), cur_timeout.clone())?;
            let ttl = coalesce(PV::Js(patch.get(c"ttl_ms")?), || cur.pv("ttl_ms"));
            let now = now();
            let deadline = now_plus(now, &t);
            let result = coalesce(PV::Js(patch.get(c"result")?), || PV::Null);
            let error = if patch.has_own(c"error")? {
                PV::Js(patch.get(c"error")?)
            } else {
                PV::Json(js.reparse(ValueRef::from(&cur.val("error_json")), "null")?)
            };
            let fields: [(&'static str, PV); 12] = [
                ("retry_count", PV::Num(next_retry)),
                ("attempt", PV::Num(next_attempt)),
                ("timeout_ms", t),
                ("ttl_ms", ttl),
                ("deadline_ms", deadline),
                ("completed_at_ms", PV::Null),
                ("started_at_ms", PV::Null),
                ("dispatched_at_ms", PV::Null),
                ("last_retry_at_ms", PV::Num(now as f64)),
                ("result", result),
                ("error", error),
                ("last_message_id", PV::Null),
            ];
            update_existing(conn, &js, &cur, &PV::Text(b"queued".to_vec()), &Patch::Retry(&fields))
        })
    }

    /// listAssigns: WHERE from the truthy filters (bound values only).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn list_assigns(
        &self,
        env: Env,
        supervisor_agent: JsVal,
        worker_agent: JsVal,
        status: JsVal,
        statuses: JsVal,
        trace_id: JsVal,
        correlation_id: JsVal,
        active_before_ms: JsVal,
        limit: JsVal,
    ) -> Result<String> {
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
            let active = js_number(&active_before_ms)?;
            let active_b = Bound::num(active.trunc());
            if active.is_finite() {
                clauses.push("deadline_ms IS NOT NULL AND deadline_ms <= ?".to_string());
                values.push(Arg::Val(&active_b));
            }
            let lim = js_number(&limit)?;
            let lim_b = Bound::num(clamp_finite(lim, 50.0, 1.0, 100.0));
            values.push(Arg::Val(&lim_b));
            let where_sql = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
            let sql = format!("SELECT * FROM assign_jobs {where_sql} ORDER BY updated_at_ms DESC LIMIT ?");
            exec::rows_text(&core.conn, &sql, &values, &ASSIGN)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_to_number_follows_js() {
        assert_eq!(str_to_number(""), 0.0);
        assert_eq!(str_to_number("  12 "), 12.0);
        assert_eq!(str_to_number("0x10"), 16.0);
        assert_eq!(str_to_number("1e3"), 1000.0);
        assert_eq!(str_to_number(".5"), 0.5);
        assert_eq!(str_to_number("-Infinity"), f64::NEG_INFINITY);
        assert!(str_to_number("abc").is_nan());
        assert!(str_to_number("inf").is_nan());
        assert!(str_to_number("1e").is_nan());
        assert!(str_to_number("-0x10").is_nan());
    }

}

