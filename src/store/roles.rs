//! Role registry (issue 4): reservations under BEGIN IMMEDIATE, compare-and-set with
//! activation guards, candidates and their reachability, pending role messages and the
//! restart recovery.
//!
//! The original computed every row value in JavaScript from the caller's input and the
//! current row, then bound it. `V` models those JS values (caller values, and column
//! values as better-sqlite3 returns them) so that `??`, `=== undefined`, `!==` and the
//! later binding behave exactly as they did.

use std::ffi::CStr;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::js::bind::{bind_all, bound_from_js, Arg, Bound};
use crate::js::v8json::Js;
use crate::native_db::{now, NativeDb};
use crate::sqlite::error::{SResult, StoreError};
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::queries as exec;
use crate::js::value::JsVal;
use crate::store::role_key::{decode, role_identity};
use crate::js::json_out::{write_row, JsonOut, CANDIDATE, MESSAGE, RAW};

const STATES: [&str; 5] = ["electable", "elected-probing", "active", "unreachable", "quarantined"];

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

/// A JS value as the original saw it: a caller's value or a column read by better-sqlite3.
#[derive(Clone)]
enum V {
    Undef,
    Null,
    Num(f64),
    /// String content as WTF-8.
    Str(Vec<u8>),
    /// A BLOB column (a fresh Buffer: never `===` anything).
    Blob(Vec<u8>),
    /// Any other caller value (boolean, BigInt, object, symbol).
    Js(JsVal),
}

impl V {
    fn js(v: JsVal) -> SResult<V> {
        Ok(if v.is_undefined() {
            V::Undef
        } else if v.is_null() {
            V::Null
        } else if let Some(n) = v.number() {
            V::Num(n)
        } else if v.is_string() {
            V::Str(v.wtf8()?)
        } else {
            V::Js(v)
        })
    }

    fn col(v: ValueRef<'_>) -> V {
        match v {
            ValueRef::Null => V::Null,
            ValueRef::Integer(i) => V::Num(i as f64),
            ValueRef::Real(f) => V::Num(f),
            ValueRef::Text(t) => V::Str(t.to_vec()),
            ValueRef::Blob(b) => V::Blob(b.to_vec()),
        }
    }

    fn text(s: &str) -> V {
        V::Str(s.as_bytes().to_vec())
    }

    fn nullish(&self) -> bool {
        matches!(self, V::Undef | V::Null)
    }

    fn is_undef(&self) -> bool {
        matches!(self, V::Undef)
    }

    fn truthy(&self) -> bool {
        match self {
            V::Undef | V::Null => false,
            V::Num(n) => !(*n == 0.0 || n.is_nan()),
            V::Str(s) => !s.is_empty(),
            V::Blob(_) => true,
            V::Js(v) => v.truthy(),
        }
    }

    /// `a === b`
    fn strict_eq(&self, other: &V) -> bool {
        match (self, other) {
            (V::Undef, V::Undef) | (V::Null, V::Null) => true,
            (V::Num(a), V::Num(b)) => a == b,
            (V::Str(a), V::Str(b)) => a == b,
            (V::Js(a), V::Js(b)) => {
                let mut same = false;
                unsafe { sys::napi_strict_equals(a.env(), a.raw(), b.raw(), &mut same) };
                same
            }
            _ => false,
        }
    }

    /// `x + 1`
    fn plus_one(&self) -> V {
        match self {
            V::Num(n) => V::Num(n + 1.0),
            V::Null => V::Num(1.0),
            V::Undef => V::Num(f64::NAN),
            V::Str(s) | V::Blob(s) => {
                let mut s = s.clone();
                s.push(b'1');
                V::Str(s)
            }
            V::Js(_) => V::Num(f64::NAN),
        }
    }

    /// A stored column value as SQLite handed it out.
    fn as_value_ref(&self) -> ValueRef<'_> {
        match self {
            V::Num(n) => ValueRef::Real(*n),
            V::Str(s) => ValueRef::Text(s),
            V::Blob(b) => ValueRef::Blob(b),
            V::Undef | V::Null | V::Js(_) => ValueRef::Null,
        }
    }

    /// better-sqlite3's binding of the value.
    fn bound(&self) -> SResult<Bound> {
        Ok(match self {
            V::Undef | V::Null => Bound::Null,
            V::Num(n) => Bound::Real(*n),
            V::Str(s) => Bound::Text(s.clone()),
            V::Blob(b) => Bound::Blob(b.clone()),
            V::Js(v) => bound_from_js(v)?,
        })
    }

    /// Whether the value is one of the reachability states.
    fn is_state(&self) -> bool {
        matches!(self, V::Str(s) if STATES.iter().any(|st| st.as_bytes() == s.as_slice()))
    }

    /// `String(x)` for the error message.
    fn to_js_string(&self) -> SResult<String> {
        Ok(match self {
            V::Undef => "undefined".into(),
            V::Null => "null".into(),
            V::Num(n) => js_number_string(*n),
            V::Str(s) | V::Blob(s) => String::from_utf8_lossy(s).into_owned(),
            V::Js(v) => String::from_utf8_lossy(&v.to_js_string()?).into_owned(),
        })
    }
}

/// `String(n)` for a JS number (Number::toString with radix 10).
fn js_number_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let mut b = ryu::Buffer::new();
    let shortest = b.format_finite(v.abs());
    // Split ryu's output into significant digits and a decimal exponent `n` such that
    // value = 0.d1d2...dk * 10^n.
    let (mantissa, exp) = match shortest.find('e') {
        Some(at) => (&shortest[..at], shortest[at + 1..].parse::<i32>().unwrap_or(0)),
        None => (shortest, 0),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, ""),
    };
    let mut digits: String = format!("{int_part}{frac_part}");
    let mut n = int_part.len() as i32 + exp;
    let lead = digits.len() - digits.trim_start_matches('0').len();
    digits.drain(..lead);
    n -= lead as i32;
    let trimmed = digits.trim_end_matches('0').len();
    digits.truncate(trimmed);
    let k = digits.len() as i32;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e >= 0 { "+" } else { "-" };
        if k == 1 {
            format!("{digits}e{sign}{}", e.abs())
        } else {
            format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    if v < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// `a ?? b()`
fn nn(a: V, b: impl FnOnce() -> SResult<V>) -> SResult<V> {
    if a.nullish() {
        b()
    } else {
        Ok(a)
    }
}

fn prop(obj: &JsVal, key: &CStr) -> SResult<V> {
    V::js(obj.get(key)?)
}

/// A row read as JS values (by column name). Rows shaped for output (candidates,
/// messages) also carry their JSON; raw role rows write theirs from the values only
/// when they are returned.
struct Row {
    names: Rc<[String]>,
    values: Vec<V>,
    shaped_json: Option<String>,
}

impl Row {
    fn get(&self, name: &str) -> V {
        self.names.iter().position(|n| n == name).map(|i| self.values[i].clone()).unwrap_or(V::Undef)
    }

    /// The row as JSON text (with the reviver prefix when it holds a BLOB).
    fn json(&self) -> std::borrow::Cow<'_, str> {
        if let Some(j) = &self.shaped_json {
            return std::borrow::Cow::Borrowed(j);
        }
        let mut out = JsonOut::new();
        out.raw("{");
        let mut first = true;
        for (name, value) in self.names.iter().zip(&self.values) {
            out.key(&mut first, name);
            match value {
                V::Null | V::Undef => out.null(),
                V::Num(n) => out.num(*n),
                V::Str(t) => out.text_bytes(t),
                V::Blob(b) => out.value(ValueRef::Blob(b)),
                V::Js(_) => out.null(),
            }
        }
        out.raw("}");
        std::borrow::Cow::Owned(out.finish())
    }
}

fn read_rows(conn: &Connection, sql: &str, args: &[Arg<'_>], shape: &crate::js::json_out::RowShape, limit_one: bool) -> SResult<Vec<Row>> {
    let mut stmt = exec::prepare(conn, sql)?;
    let values = crate::js::bind::bind_args(&stmt, args)?;
    crate::js::bind::apply(&mut stmt, &values)?;
    let names: Rc<[String]> = stmt.column_names().map(|s| s.to_string()).collect();
    let raw = shape.json.is_empty() && !shape.reflexion_type;
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(names.len());
        for i in 0..names.len() {
            values.push(V::col(row.get_ref(i)?));
        }
        let shaped_json = if raw {
            None
        } else {
            let mut json = JsonOut::new();
            write_row(&mut json, row, shape)?;
            Some(json.finish())
        };
        out.push(Row { names: names.clone(), values, shaped_json });
        if limit_one {
            break;
        }
    }
    Ok(out)
}

/// A role row, or `null`, spliced into a bigger document.
fn opt_row(d: &mut JsonOut, row: Option<&Row>) {
    match row {
        Some(r) => d.piece(&r.json()),
        None => d.null(),
    }
}

fn get_role_row(conn: &Connection, wire: &Bound) -> SResult<Option<Row>> {
    Ok(read_rows(conn, GET_ROLE, &[Arg::Val(wire)], &RAW, true)?.pop())
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
    version: V,
    epoch: V,
    activation_seq: V,
    activation_id: V,
}

/// `roleFailureReason(current, expected)` with strict comparisons.
fn failure_reason(current: Option<&Row>, e: &Expected) -> &'static str {
    let Some(c) = current else { return "not_found" };
    if !c.get("version").strict_eq(&e.version) {
        "stale_version"
    } else if !c.get("epoch").strict_eq(&e.epoch) {
        "stale_epoch"
    } else if !c.get("activation_seq").strict_eq(&e.activation_seq) {
        "stale_activation_seq"
    } else if !c.get("activation_id").strict_eq(&e.activation_id) {
        "stale_activation_id"
    } else {
        "cas_conflict"
    }
}

fn invalid_state(state: &V) -> SResult<StoreError> {
    Ok(StoreError::error(format!("invalid role reachability state: {}", state.to_js_string()?)))
}

fn bind_run(conn: &Connection, sql: &str, values: &[V]) -> SResult<usize> {
    let bound: Vec<Bound> = values.iter().map(|v| v.bound()).collect::<SResult<_>>()?;
    let mut stmt = exec::prepare(conn, sql)?;
    bind_all(&mut stmt, &bound)?;
    Ok(stmt.raw_execute()?)
}

/// `a <= b` for a column value and a caller's value (JS abstract relational comparison).
fn js_le(a: &V, b: &JsVal) -> SResult<bool> {
    if let (V::Str(x), true) = (a, b.is_string()) {
        let xs: Vec<u16> = String::from_utf8_lossy(x).encode_utf16().collect();
        return Ok(xs <= b.utf16()?);
    }
    let left = match a {
        V::Num(n) => *n,
        V::Null => 0.0,
        V::Str(s) | V::Blob(s) => {
            let t = String::from_utf8_lossy(s);
            let t = t.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse::<f64>().unwrap_or(f64::NAN)
            }
        }
        _ => f64::NAN,
    };
    let right = if b.is_bigint() { b.bigint_i64().map_or(0.0, |(v, _)| v as f64) } else { b.to_number()? };
    Ok(left <= right)
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
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || reserve(conn, &input))
        })
    }

    #[napi]
    pub fn compare_and_set_role(&self, env: Env, input: JsVal) -> Result<String> {
        self.with_atomic(&env, |conn| compare_and_set(conn, &input))
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
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| upsert_candidate(&js, conn, &input))
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
        self.with(&env, |core| {
            let conn = &core.conn;
            in_transaction(conn, Behavior::Immediate, || recover(conn, &now_ms))
        })
    }
}

fn reserve(conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let current = get_role_row(conn, &wire)?;
    let cur = |name: &str| current.as_ref().map(|c| c.get(name)).unwrap_or(V::Undef);
    let g = |key: &CStr| prop(input, key);

    let expected_version = nn(g(c"expected_version")?, || nn(g(c"expectedVersion")?, || Ok(cur("version"))))?;
    let expected_epoch = nn(g(c"expected_epoch")?, || nn(g(c"expectedEpoch")?, || Ok(cur("epoch"))))?;
    if let Some(c) = &current {
        if !expected_version.strict_eq(&c.get("version")) {
            return Ok(result(false, Some("stale_version"), Some(c)));
        }
        if !expected_epoch.strict_eq(&c.get("epoch")) {
            return Ok(result(false, Some("stale_epoch"), Some(c)));
        }
    }
    let next_epoch = nn(g(c"epoch")?, || {
        nn(g(c"next_epoch")?, || Ok(if current.is_some() { cur("epoch").plus_one() } else { V::Num(0.0) }))
    })?;
    if let Some(c) = &current {
        if !next_epoch.strict_eq(&c.get("epoch").plus_one()) {
            return Ok(result(false, Some("stale_epoch"), Some(c)));
        }
    }
    let next_seq = nn(g(c"activation_seq")?, || {
        nn(g(c"next_activation_seq")?, || {
            Ok(if current.is_some() { cur("activation_seq").plus_one() } else { V::Num(0.0) })
        })
    })?;
    if let Some(c) = &current {
        if !next_seq.strict_eq(&c.get("activation_seq").plus_one()) {
            return Ok(result(false, Some("stale_activation_seq"), Some(c)));
        }
    }

    let state_in = g(c"state")?;
    let state = if state_in.nullish() {
        let holder = g(c"holder_agent_id")?;
        V::text(if holder.truthy() { "elected-probing" } else { "electable" })
    } else {
        state_in
    };
    if !state.is_state() {
        return Err(invalid_state(&state)?);
    }
    let holder = g(c"holder_agent_id")?;
    let holder_agent_id = nn(holder.clone(), || Ok(V::Null))?;
    let previous_holder = nn(g(c"previous_holder_agent_id")?, || {
        let current_holder = cur("holder_agent_id");
        if !current_holder.strict_eq(&holder) {
            nn(current_holder, || Ok(V::Null))
        } else {
            nn(cur("previous_holder_agent_id"), || Ok(V::Null))
        }
    })?;
    let activation_id = nn(g(c"activation_id")?, || {
        if holder.truthy() {
            Ok(V::text(&crate::store::uuid7::next()))
        } else {
            nn(cur("activation_id"), || Ok(V::Null))
        }
    })?;
    let keep = |key: &CStr, name: &str| -> SResult<V> { nn(g(key)?, || nn(cur(name), || Ok(V::Null))) };
    let deadline = keep(c"activation_deadline_ms", "activation_deadline_ms")?;
    let lease = keep(c"holder_lease_expires_ms", "holder_lease_expires_ms")?;
    let charter_version = keep(c"charter_version", "charter_version")?;
    let charter_acked = keep(c"charter_acked_epoch", "charter_acked_epoch")?;
    let retry_count = nn(g(c"retry_count")?, || nn(cur("retry_count"), || Ok(V::Num(0.0))))?;
    let next_probe = keep(c"next_probe_ms", "next_probe_ms")?;
    let blocked_in = g(c"blocked_reason")?;
    let blocked = if blocked_in.is_undef() { nn(cur("blocked_reason"), || Ok(V::Null))? } else { blocked_in };
    let last_transition = nn(g(c"last_transition_ms")?, || Ok(V::Num(now() as f64)))?;
    let last_reason = nn(g(c"last_reason")?, || Ok(V::text("role_reserved")))?;

    match &current {
        None => {
            let wire_v = V::Str(identity.wire.wtf8()?);
            let scope = identity.scope().to_string();
            bind_run(
                conn,
                INSERT_ROLE,
                &[
                    wire_v,
                    V::text(&identity.key.project_id),
                    V::text(identity.key.role_kind),
                    V::text(&scope),
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
                    V::Num(0.0),
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
                    V::Str(identity.wire.wtf8()?),
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
                return Ok(result(false, Some(failure_reason(latest.as_ref(), &expected)), latest.as_ref()));
            }
        }
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}

fn compare_and_set(conn: &Connection, input: &JsVal) -> SResult<String> {
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
    let reason = failure_reason(Some(&current), &expected);
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
    let p = |key: &CStr| -> SResult<V> {
        match &patch {
            Some(obj) => prop(obj, key),
            None => Ok(V::Undef),
        }
    };
    let state = nn(p(c"state")?, || Ok(current.get("state")))?;
    if !state.is_state() {
        return Err(invalid_state(&state)?);
    }
    let patched = |key: &CStr, name: &str| -> SResult<V> {
        let v = p(key)?;
        Ok(if v.is_undef() { current.get(name) } else { v })
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
    let last_transition = nn(p(c"last_transition_ms")?, || Ok(V::Num(now() as f64)))?;
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
            V::Str(identity.wire.wtf8()?),
            expected.epoch.clone(),
            expected.activation_seq.clone(),
            expected.activation_id.clone(),
            expected.version.clone(),
        ],
    )?;
    if changes != 1 {
        let latest = get_role_row(conn, &wire)?;
        return Ok(result(false, Some(failure_reason(latest.as_ref(), &expected)), latest.as_ref()));
    }
    let fresh = get_role_row(conn, &wire)?;
    Ok(result(true, None, fresh.as_ref()))
}

fn upsert_candidate(js: &Js, conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let agent = input.get(c"agent_id")?;
    let current = read_rows(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE, true)?.pop();
    let cur = |name: &str| current.as_ref().map(|c| c.get(name)).unwrap_or(V::Undef);
    let g = |key: &CStr| prop(input, key);

    let source = nn(g(c"source")?, || nn(cur("source"), || Ok(V::text("operator"))))?;
    let priority = nn(g(c"priority")?, || nn(cur("priority"), || Ok(V::Num(0.0))))?;
    let locators_in = input.get(c"transport_locators")?;
    let locators = if locators_in.is_nullish() {
        // JSON.stringify(parseJson(stored, [])): a stored 'null' writes "null".
        let text = js.reparse(cur("transport_locators_json").as_value_ref(), "[]")?;
        V::Str(text.unwrap_or_else(|| b"null".to_vec()))
    } else {
        js.stringify(locators_in.raw())?.map(V::Str).unwrap_or(V::Undef)
    };
    let failures = nn(g(c"consecutive_probe_failures")?, || nn(cur("consecutive_probe_failures"), || Ok(V::Num(0.0))))?;
    let kept = |key: &CStr, name: &str| -> SResult<V> {
        let v = g(key)?;
        if v.is_undef() {
            nn(cur(name), || Ok(V::Null))
        } else {
            Ok(v)
        }
    };
    let excluded = kept(c"excluded_until_ms", "excluded_until_ms")?;
    let last_probe = kept(c"last_probe_ms", "last_probe_ms")?;
    let last_code = kept(c"last_probe_code", "last_probe_code")?;
    let updated = nn(g(c"updated_at_ms")?, || Ok(V::Num(now() as f64)))?;
    bind_run(
        conn,
        UPSERT_CANDIDATE,
        &[V::Str(identity.wire.wtf8()?), V::js(agent)?, source, priority, locators, failures, excluded, last_probe, last_code, updated],
    )?;
    let mut out = JsonOut::new();
    exec::get_json_args(&mut out, conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE)?;
    Ok(out.finish())
}

fn update_reachability(conn: &Connection, input: &JsVal) -> SResult<String> {
    let identity = role_identity(input)?;
    let wire = Bound::Text(identity.wire.wtf8()?);
    let agent = input.get(c"agent_id")?;
    let Some(current) = read_rows(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE, true)?.pop() else {
        return Ok("{\"ok\":false,\"reason\":\"not_found\"}".into());
    };
    let g = |key: &CStr| prop(input, key);
    let mut failures = nn(g(c"consecutive_probe_failures")?, || Ok(current.get("consecutive_probe_failures")))?;
    if input.get(c"probe_failed")?.is_true() || input.get(c"increment_probe_failures")?.is_true() {
        failures = current.get("consecutive_probe_failures").plus_one();
    } else if input.get(c"probe_succeeded")?.is_true() {
        failures = V::Num(0.0);
    }
    let excluded_in = g(c"excluded_until_ms")?;
    let excluded = if excluded_in.is_undef() { current.get("excluded_until_ms") } else { excluded_in };
    // Two separate Date.now() calls in the original.
    let last_probe = nn(g(c"last_probe_ms")?, || Ok(V::Num(now() as f64)))?;
    let code_in = g(c"last_probe_code")?;
    let last_code = if code_in.is_undef() { current.get("last_probe_code") } else { code_in };
    let updated = nn(g(c"updated_at_ms")?, || Ok(V::Num(now() as f64)))?;
    bind_run(
        conn,
        UPDATE_REACHABILITY,
        &[failures, excluded, last_probe, last_code, updated, V::Str(identity.wire.wtf8()?), V::js(agent)?],
    )?;
    let fresh = read_rows(conn, GET_CANDIDATE, &[Arg::Val(&wire), Arg::Js(agent)], &CANDIDATE, true)?.pop();
    let mut d = JsonOut::new();
    d.raw("{\"ok\":true,\"candidate\":");
    opt_row(&mut d, fresh.as_ref());
    d.raw("}");
    Ok(d.finish())
}

fn recover(conn: &Connection, now_ms: &JsVal) -> SResult<String> {
    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, false)?;
    for role in &roles {
        let wire = role.get("role_key_wire");
        let holder = role.get("holder_agent_id");
        let guard = [wire, role.get("version"), role.get("epoch")];
        if holder.truthy() {
            let lease = role.get("holder_lease_expires_ms");
            if lease.nullish() || js_le(&lease, now_ms)? {
                let mut values = vec![V::js(*now_ms)?];
                values.extend(guard);
                bind_run(conn, RECOVER_EXPIRED, &values)?;
            } else {
                let mut values = vec![V::text(&crate::store::uuid7::next()), V::js(*now_ms)?];
                values.extend(guard);
                bind_run(conn, RECOVER_LIVE, &values)?;
            }
        } else if role.get("activation_id").truthy() || role.get("state").strict_eq(&V::text("elected-probing")) {
            let mut values = vec![V::js(*now_ms)?];
            values.extend(guard);
            bind_run(conn, RECOVER_ORPHANED, &values)?;
        }
    }

    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, false)?;
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
        for c in read_rows(conn, LIST_CANDIDATES, &[Arg::Val(&wire)], &CANDIDATE, false)? {
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
        for m in read_rows(conn, PENDING_MESSAGES, &[Arg::Val(&wire), Arg::Js(*now_ms)], &MESSAGE, false)? {
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
    fn strict_equality_and_plus_one_follow_js() {
        assert!(V::Num(1.0).strict_eq(&V::Num(1.0)));
        assert!(!V::text("1").strict_eq(&V::Num(1.0)));
        assert!(!V::Null.strict_eq(&V::Undef));
        assert!(!V::Num(f64::NAN).strict_eq(&V::Num(f64::NAN)));
        assert!(!V::Blob(vec![1]).strict_eq(&V::Blob(vec![1])));
        assert!(matches!(V::Num(4.0).plus_one(), V::Num(n) if n == 5.0));
        assert!(matches!(V::text("4").plus_one(), V::Str(s) if s == b"41"));
        assert!(V::text("active").is_state());
        assert!(!V::text("Active").is_state());
        assert_eq!(V::Num(1e21).to_js_string().ok().as_deref(), Some("1e+21"));
        assert_eq!(V::Num(5e-7).to_js_string().ok().as_deref(), Some("5e-7"));
        assert_eq!(V::Num(-3.0).to_js_string().ok().as_deref(), Some("-3"));
        for (v, js) in [
            (9007199254740994.0, "9007199254740994"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (-0.1, "-0.1"),
            (1234.5678, "1234.5678"),
            (100.0, "100"),
            (-0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(js_number_string(v), js, "{v}");
        }
    }
}
