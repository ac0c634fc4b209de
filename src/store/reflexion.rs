//! Reflexion memory (issue 3): add/get/find/hit/list/patch/delete/prune.
//!
//! findReflexion keeps the original's matching but never pastes caller text into SQL:
//! the JSON path `"$." + key` is bound as a parameter. For every key without a `'` this
//! is the very path the original built (dotted keys are nested paths, `""` gives
//! `bad JSON path: '$.'`). Deliberate differences, all for keys containing `'`:
//! * When the text after the first `'` starts with a plain identifier that is not an
//!   SQL keyword (e.g. `a'b`), the original's statement was a syntax error at that
//!   word; the same `SqliteError` (`near "b": syntax error`) is thrown by construction.
//! * Any other quoted key (e.g. `a') = ? OR 1=1 --`, which injected into the original's
//!   SQL, or `a''b`, which the original read as path `$.a'b`) is looked up as the
//!   literal path `$.<key>`, so it matches only entries whose context has that path.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use rusqlite::types::ValueRef;

use crate::store::assign::{col_number, js_number, read_current, str_to_number, Cur, Js, PV};
use crate::js::bind::{apply, bind_args_with, bound_from_js, Anonymous, Arg, Bound};
use crate::native_db::{now, NativeDb};
use crate::sqlite::error::{SResult, StoreError};
use crate::store::queries as exec;
use crate::js::value::{wtf8_from_utf16, JsVal};
use crate::js::json_out::{is_valid_json, value_truthy, write_row, JsonOut, REFLEXION};

const INSERT: &str = "INSERT INTO reflexion_entries (id, type, error_pattern, error_message, context_json, solution, solution_code, adaptive_state_json, confidence, hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
const GET: &str = "SELECT * FROM reflexion_entries WHERE id = ?";
const FIND_EXACT: &str = "SELECT * FROM reflexion_entries WHERE error_pattern = ? ORDER BY confidence DESC";
const FIND_LIKE: &str =
    "SELECT * FROM reflexion_entries WHERE error_pattern LIKE ? ESCAPE '\\' ORDER BY confidence DESC LIMIT 10";
const HIT_SUCCESS: &str = "UPDATE reflexion_entries SET hit_count = hit_count + 1, success_count = success_count + 1, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?";
const HIT_ONLY: &str =
    "UPDATE reflexion_entries SET hit_count = hit_count + 1, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?";
const SET_CONFIDENCE: &str = "UPDATE reflexion_entries SET confidence = ?, updated_at_ms = ? WHERE id = ?";
const PRUNE: &str = "DELETE FROM reflexion_entries WHERE updated_at_ms < ? AND confidence < ?";
const LIST: &str = "SELECT * FROM reflexion_entries ORDER BY confidence DESC, updated_at_ms DESC";
const DELETE: &str = "DELETE FROM reflexion_entries WHERE id = ?";
const PATCH: &str = "UPDATE reflexion_entries SET type = ?, error_pattern = ?, error_message = ?, context_json = ?, solution = ?, solution_code = ?, adaptive_state_json = ?, confidence = ?, hit_count = ?, success_count = ?, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?";

/// recalcConfidence of hub/reflexion.mjs on plain numbers (`hit` truthy and > 0).
pub fn recalc_confidence(hit: f64, success: f64) -> f64 {
    if hit == 0.0 || hit.is_nan() || hit <= 0.0 {
        return 0.5;
    }
    let ratio = success / hit;
    let decay = (hit / 10.0).min(1.0);
    ratio * decay + 0.5 * (1.0 - decay)
}

/// `Math.max(0, Math.min(1, x))` (NaN stays NaN).
pub fn clamp01(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    x.clamp(0.0, 1.0)
}

fn get_row(conn: &rusqlite::Connection, id: Arg<'_>) -> SResult<String> {
    exec::row_text(conn, GET, &[id], &REFLEXION)
}

/// Own enumerable string keys (`Object.keys`), with ToObject's error for null/undefined.
fn object_keys(v: &JsVal) -> SResult<Vec<JsVal>> {
    if v.is_nullish() {
        return Err(StoreError::type_error("Cannot convert undefined or null to object"));
    }
    let env = v.env();
    let mut obj = v.raw();
    if !(v.is_object() || v.is_function()) {
        let mut o = std::ptr::null_mut();
        if unsafe { sys::napi_coerce_to_object(env, v.raw(), &mut o) } != sys::Status::napi_ok {
            return Err(StoreError::Pending);
        }
        obj = o;
    }
    let mut arr = std::ptr::null_mut();
    let status = unsafe {
        sys::napi_get_all_property_names(
            env,
            obj,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut arr,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(StoreError::Pending);
    }
    let arr = JsVal::from_raw(env, arr)?;
    (0..arr.array_len()?).map(|i| arr.element(i)).collect()
}

const CONTINUATION_KEYWORDS: [&str; 16] = [
    "AND", "OR", "IS", "NOT", "IN", "LIKE", "GLOB", "MATCH", "REGEXP", "BETWEEN", "COLLATE", "ESCAPE", "ISNULL",
    "NOTNULL", "NULLS", "FILTER",
];

/// The original pasted each key into `json_extract(context_json, '$.<key>')`. For a key
/// with a `'` whose text after the quote starts with a plain identifier, that SQL was a
/// syntax error at that identifier; reproduce that error without building the SQL.
/// Other quoted keys are looked up as literal paths (a deliberate difference).
fn quoted_key_syntax_error(key: &[u16]) -> Option<StoreError> {
    let q = key.iter().position(|&u| u == b'\'' as u16)?;
    let rest = String::from_utf16_lossy(&key[q + 1..]);
    let rest = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0c']);
    let first = rest.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_' || !first.is_ascii()) {
        return None;
    }
    let word: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$' || !c.is_ascii()).collect();
    let upper = word.to_ascii_uppercase();
    if CONTINUATION_KEYWORDS.contains(&upper.as_str()) || is_sqlite_keyword(&word) {
        return None;
    }
    Some(StoreError::sqlite(rusqlite::ffi::SQLITE_ERROR, format!("near \"{word}\": syntax error")))
}

fn is_sqlite_keyword(word: &str) -> bool {
    unsafe { rusqlite::ffi::sqlite3_keyword_check(word.as_ptr().cast(), word.len() as i32) != 0 }
}

/// `errorPattern.replace(/[%_\\]/g, "\\$&")` then `.slice(0, 100)`, wrapped in `%…%`.
fn like_pattern(pattern: &JsVal) -> SResult<Bound> {
    if !pattern.is_string() {
        if pattern.is_nullish() {
            return Err(StoreError::type_error(format!(
                "Cannot read properties of {} (reading 'replace')",
                if pattern.is_null() { "null" } else { "undefined" }
            )));
        }
        return Err(StoreError::type_error("errorPattern.replace is not a function"));
    }
    let mut units: Vec<u16> = Vec::new();
    for u in pattern.utf16()? {
        if u == b'%' as u16 || u == b'_' as u16 || u == b'\\' as u16 {
            units.push(b'\\' as u16);
        }
        units.push(u);
    }
    units.truncate(100);
    let mut bytes = vec![b'%'];
    bytes.extend(wtf8_from_utf16(&units));
    bytes.push(b'%');
    Ok(Bound::Text(bytes))
}

/// Rows of `sql` (bound as better-sqlite3 binds `args`), as a JSON array.
fn find_rows(out: &mut JsonOut, conn: &rusqlite::Connection, sql: &str, args: &[Arg<'_>], paths: &[Bound]) -> SResult<usize> {
    let mut stmt = exec::prepare(conn, sql)?;
    // The caller's values are bound with positional rules against ?1..?n; the paths
    // take the following indexes.
    let values = bind_args_with(&Anonymous(1 + paths.len()), args)?;
    apply(&mut stmt, &values)?;
    for (i, p) in paths.iter().enumerate() {
        stmt.raw_bind_parameter(2 + paths.len() + i, p)?;
    }
    exec::all_rows(out, stmt, &REFLEXION)
}

/// `a >= b` with JS semantics, for a stored confidence and the caller's minConfidence.
fn js_ge(conf: ValueRef<'_>, min: &MinConf) -> bool {
    match (conf, min) {
        (ValueRef::Text(t), MinConf::Str(m)) => {
            let a: Vec<u16> = String::from_utf8_lossy(t).encode_utf16().collect();
            a.as_slice() >= m.as_slice()
        }
        (_, MinConf::Num(m)) => {
            let a = col_number(conf);
            a >= *m
        }
        (_, MinConf::Str(m)) => {
            let a = col_number(conf);
            a >= str_to_number(&String::from_utf16_lossy(m))
        }
    }
}

enum MinConf {
    Num(f64),
    Str(Vec<u16>),
}

/// `parseJson(adaptive_state_json, {})?.project_slug === slug`
fn project_slug_matches(stored: ValueRef<'_>, slug: &JsVal) -> SResult<bool> {
    let text = match stored {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        _ => return Ok(false),
    };
    if !is_valid_json(&text) {
        return Ok(false);
    }
    let Some(raw) = top_level_member(&text, "project_slug") else { return Ok(false) };
    if slug.is_string() {
        return Ok(raw.starts_with('"') && decode_json_string(raw) == slug.utf16()?);
    }
    if let Some(n) = slug.number() {
        return Ok(!raw.starts_with(['"', '{', '[', 't', 'f', 'n']) && raw.parse::<f64>().map(|v| v == n).unwrap_or(false));
    }
    if let Some(b) = slug.bool_value() {
        return Ok(raw == if b { "true" } else { "false" });
    }
    Ok(false)
}

/// The raw text of the last `key` member of a top-level JSON object (valid JSON given).
fn top_level_member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let b = text.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    ws(&mut i);
    if i >= b.len() || b[i] != b'{' {
        return None;
    }
    i += 1;
    let mut found = None;
    loop {
        ws(&mut i);
        if i >= b.len() || b[i] == b'}' {
            return found;
        }
        let kstart = i;
        i = skip_value(b, i);
        let k = &text[kstart..i];
        ws(&mut i);
        i += 1; // ':'
        ws(&mut i);
        let vstart = i;
        i = skip_value(b, i);
        if decode_json_string(k) == key.encode_utf16().collect::<Vec<_>>() {
            found = Some(&text[vstart..i]);
        }
        ws(&mut i);
        if i < b.len() && b[i] == b',' {
            i += 1;
        }
    }
}

fn skip_value(b: &[u8], mut i: usize) -> usize {
    match b[i] {
        b'"' => {
            i += 1;
            while b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i + 1
        }
        b'{' | b'[' => {
            let mut depth = 0;
            loop {
                match b[i] {
                    b'"' => {
                        i = skip_value(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                i += 1;
            }
            i
        }
    }
}

/// A JSON string literal's UTF-16 units.
fn decode_json_string(raw: &str) -> Vec<u16> {
    let inner = &raw[1..raw.len().saturating_sub(1).max(1)];
    let mut out = Vec::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u16; 2];
            out.extend_from_slice(c.encode_utf16(&mut buf));
            continue;
        }
        match chars.next() {
            Some('n') => out.push(10),
            Some('r') => out.push(13),
            Some('t') => out.push(9),
            Some('b') => out.push(8),
            Some('f') => out.push(12),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.push(u16::from_str_radix(&hex, 16).unwrap_or(0));
            }
            Some(other) => out.push(other as u16),
            None => {}
        }
    }
    out
}

#[napi]
impl NativeDb {
    /// addReflexion (the glue applies the destructuring defaults).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn add_reflexion(
        &self,
        env: Env,
        entry_type: JsVal,
        error_pattern: JsVal,
        error_message: JsVal,
        context: JsVal,
        solution: JsVal,
        solution_code: JsVal,
        adaptive_state: JsVal,
        confidence: JsVal,
        hit_count: JsVal,
        success_count: JsVal,
        last_hit_ms: JsVal,
        created_at_ms: JsVal,
        updated_at_ms: JsVal,
    ) -> Result<String> {
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| {
            let now = now();
            let id = crate::store::uuid7::next();
            let context_json = PV::Js(context).stringify(&js)?;
            let adaptive_json = PV::Js(adaptive_state).stringify(&js)?;
            let or_now = |v: &JsVal| -> SResult<Bound> {
                if v.is_nullish() {
                    Ok(Bound::num(now as f64))
                } else {
                    bound_from_js(v)
                }
            };
            let text_or_null = |v: Option<Vec<u8>>| v.map(Bound::Text).unwrap_or(Bound::Null);
            let params = [
                Bound::text(&id),
                bound_from_js(&entry_type)?,
                bound_from_js(&error_pattern)?,
                bound_from_js(&error_message)?,
                text_or_null(context_json),
                bound_from_js(&solution)?,
                bound_from_js(&solution_code)?,
                text_or_null(adaptive_json),
                bound_from_js(&confidence)?,
                bound_from_js(&hit_count)?,
                bound_from_js(&success_count)?,
                or_now(&last_hit_ms)?,
                or_now(&created_at_ms)?,
                or_now(&updated_at_ms)?,
            ];
            exec::run(conn, INSERT, &params)?;
            exec::row_text(conn, GET, &[Arg::Val(&Bound::text(&id))], &REFLEXION)
        })
    }

    #[napi]
    pub fn get_reflexion(&self, env: Env, id: JsVal) -> Result<String> {
        self.with(&env, |core| get_row(&core.conn, Arg::Js(id)))
    }

    /// findReflexion: exact match first (no limit), then LIKE (limit 10); context keys
    /// filter on `json_extract(context_json, <bound path>)`.
    #[napi]
    pub fn find_reflexion(&self, env: Env, error_pattern: JsVal, context: JsVal) -> Result<String> {
        self.with(&env, |core| {
            let keys = object_keys(&context)?;
            let mut ctx_vals: Vec<JsVal> = Vec::new();
            let mut ctx_keys: Vec<Vec<u16>> = Vec::new();
            for k in keys {
                let v = context.get_by(&k)?;
                if !v.is_nullish() {
                    ctx_keys.push(k.utf16()?);
                    ctx_vals.push(v);
                }
            }
            let mut out = JsonOut::new();
            if ctx_keys.is_empty() {
                let n = exec::all_json_args(&mut out, &core.conn, FIND_EXACT, &[Arg::Js(error_pattern)], &REFLEXION)?;
                if n > 0 {
                    return Ok(out.finish());
                }
                let pattern = like_pattern(&error_pattern)?;
                let mut out = JsonOut::new();
                exec::all_json(&mut out, &core.conn, FIND_LIKE, &[pattern], &REFLEXION)?;
                return Ok(out.finish());
            }
            // Where the original's SQL text was a syntax error, fail the same way.
            for k in &ctx_keys {
                if k.contains(&(b'\'' as u16)) {
                    if let Some(e) = quoted_key_syntax_error(k) {
                        return Err(e);
                    }
                    break;
                }
            }
            let n = ctx_keys.len();
            let paths: Vec<Bound> = ctx_keys
                .iter()
                .map(|k| {
                    let mut units: Vec<u16> = "$.".encode_utf16().collect();
                    units.extend_from_slice(k);
                    Bound::Text(wtf8_from_utf16(&units))
                })
                .collect();
            // Values take ?1..?(n+1); the path of key i is ?(n+2+i).
            let ctx_where: String =
                (0..n).map(|i| format!(" AND json_extract(context_json, ?{}) = ?{}", n + 2 + i, i + 2)).collect();
            let exact_sql = format!("SELECT * FROM reflexion_entries WHERE error_pattern = ?1{ctx_where} ORDER BY confidence DESC");
            let mut args: Vec<Arg<'_>> = vec![Arg::Js(error_pattern)];
            args.extend(ctx_vals.iter().map(|v| Arg::Js(*v)));
            let found = find_rows(&mut out, &core.conn, &exact_sql, &args, &paths)?;
            if found > 0 {
                return Ok(out.finish());
            }
            let pattern = like_pattern(&error_pattern)?;
            let like_sql = format!(
                "SELECT * FROM reflexion_entries WHERE error_pattern LIKE ?1 ESCAPE '\\'{ctx_where} ORDER BY confidence DESC LIMIT 10"
            );
            let mut args: Vec<Arg<'_>> = vec![Arg::Val(&pattern)];
            args.extend(ctx_vals.iter().map(|v| Arg::Js(*v)));
            let mut out = JsonOut::new();
            find_rows(&mut out, &core.conn, &like_sql, &args, &paths)?;
            Ok(out.finish())
        })
    }

    /// updateReflexionHit: count the hit, then recompute the confidence.
    #[napi]
    pub fn update_reflexion_hit(&self, env: Env, id: JsVal, success: JsVal) -> Result<String> {
        self.with_atomic(&env, |conn| {
            let now_b = Bound::num(now() as f64);
            let sql = if success.truthy() { HIT_SUCCESS } else { HIT_ONLY };
            exec::run_args(conn, sql, &[Arg::Val(&now_b), Arg::Val(&now_b), Arg::Js(id)])?;
            if let Some(entry) = read_current(conn, GET, id)? {
                let hit = entry.val("hit_count");
                let hit_n = col_number(ValueRef::from(&hit));
                // entry.hit_count > 0 (a string compares as a number here too)
                if hit_n > 0.0 {
                    let conf = recalc_entry(&entry);
                    let conf_b = Bound::num(clamp01(conf));
                    exec::run_args(conn, SET_CONFIDENCE, &[Arg::Val(&conf_b), Arg::Val(&now_b), Arg::Js(id)])?;
                }
            }
            get_row(conn, Arg::Js(id))
        })
    }

    /// listReflexion: every row (confidence DESC, updated_at_ms DESC), filtered like the
    /// original's three JS filters.
    #[napi]
    pub fn list_reflexion(&self, env: Env, entry_type: JsVal, min_confidence: JsVal, project_slug: JsVal) -> Result<String> {
        self.with(&env, |core| {
            let type_units = if entry_type.truthy() { Some(if entry_type.is_string() { Some(entry_type.utf16()?) } else { None }) } else { None };
            // Converted on first use: `>=` only coerces it when a row reaches that filter.
            let mut min: Option<MinConf> = None;
            let slug = if project_slug.truthy() { Some(project_slug) } else { None };
            let mut stmt = exec::prepare(&core.conn, LIST)?;
            let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
            let col = |n: &str| names.iter().position(|c| c == n);
            let (type_i, conf_i, state_i) = (col("type"), col("confidence"), col("adaptive_state_json"));
            let mut rows = stmt.raw_query();
            let mut out = JsonOut::new();
            out.buf.push('[');
            let mut first = true;
            while let Some(row) = rows.next()? {
                if let Some(want) = &type_units {
                    let Some(want) = want else { continue };
                    let t = type_i.map(|i| row.get_ref(i)).transpose()?.unwrap_or(ValueRef::Null);
                    let have: Vec<u16> = if value_truthy(t) {
                        match t {
                            ValueRef::Text(b) => String::from_utf8_lossy(b).encode_utf16().collect(),
                            _ => continue,
                        }
                    } else {
                        "reflexion".encode_utf16().collect()
                    };
                    if &have != want {
                        continue;
                    }
                }
                let conf = conf_i.map(|i| row.get_ref(i)).transpose()?.unwrap_or(ValueRef::Null);
                if min.is_none() {
                    min = Some(if min_confidence.is_string() {
                        MinConf::Str(min_confidence.utf16()?)
                    } else {
                        MinConf::Num(js_number(&min_confidence)?)
                    });
                }
                if !js_ge(conf, min.as_ref().expect("set above")) {
                    continue;
                }
                if let Some(slug) = &slug {
                    let st = state_i.map(|i| row.get_ref(i)).transpose()?.unwrap_or(ValueRef::Null);
                    if !project_slug_matches(st, slug)? {
                        continue;
                    }
                }
                if !first {
                    out.buf.push(',');
                }
                first = false;
                write_row(&mut out, row, &REFLEXION)?;
            }
            out.buf.push(']');
            Ok(out.finish())
        })
    }

    /// patchReflexion: `{...current, ...patch}` over the fixed column list.
    #[napi]
    pub fn patch_reflexion(&self, env: Env, id: JsVal, patch: JsVal) -> Result<String> {
        let js = Js::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_current(conn, GET, id)? else { return Ok("null".to_string()) };
            let now = now();
            // {...patch}: own keys of an object patch override the current values.
            let spread = |key: &std::ffi::CStr, col: &str| -> SResult<PV> {
                if (patch.is_object() || patch.is_function()) && patch.has_own(key)? {
                    Ok(PV::Js(patch.get(key)?))
                } else {
                    Ok(current_value(&cur, col))
                }
            };
            let ty = spread(c"type", "type")?;
            let error_pattern = spread(c"error_pattern", "error_pattern")?;
            let error_message = spread(c"error_message", "error_message")?;
            let solution = spread(c"solution", "solution")?;
            let solution_code = spread(c"solution_code", "solution_code")?;
            let confidence = spread(c"confidence", "confidence")?;
            let hit_count = spread(c"hit_count", "hit_count")?;
            let success_count = spread(c"success_count", "success_count")?;
            let last_hit_ms = spread(c"last_hit_ms", "last_hit_ms")?;
            let context = PV::Js(patch.get(c"context")?);
            let adaptive = PV::Js(patch.get(c"adaptive_state")?);
            let updated = PV::Js(patch.get(c"updated_at_ms")?);
            let context_json = if context.nullish() {
                Some(js.reparse(ValueRef::from(&cur.val("context_json")), "{}")?.unwrap_or_else(|| b"{}".to_vec()))
            } else {
                context.stringify(&js)?
            };
            let adaptive_json = if adaptive.nullish() {
                Some(js.reparse(ValueRef::from(&cur.val("adaptive_state_json")), "{}")?.unwrap_or_else(|| b"{}".to_vec()))
            } else {
                adaptive.stringify(&js)?
            };
            let updated = if updated.nullish() { PV::Num(now as f64) } else { updated };
            let solution_code = if solution_code.nullish() { PV::Null } else { solution_code };
            let texts = [context_json.map(Bound::Text).unwrap_or(Bound::Null), adaptive_json.map(Bound::Text).unwrap_or(Bound::Null)];
            let fixed: Vec<Bound> = [&ty, &error_pattern, &error_message, &solution, &solution_code, &confidence, &hit_count, &success_count, &last_hit_ms, &updated]
                .iter()
                .map(|v| match v {
                    PV::Js(_) => Bound::Null,
                    other => other.bound().unwrap_or(Bound::Null),
                })
                .collect();
            let arg = |v: &PV, i: usize| -> Arg<'_> {
                match v {
                    PV::Js(j) => Arg::Js(*j),
                    _ => Arg::Val(&fixed[i]),
                }
            };
            let args = [
                arg(&ty, 0),
                arg(&error_pattern, 1),
                arg(&error_message, 2),
                Arg::Val(&texts[0]),
                arg(&solution, 3),
                arg(&solution_code, 4),
                Arg::Val(&texts[1]),
                arg(&confidence, 5),
                arg(&hit_count, 6),
                arg(&success_count, 7),
                arg(&last_hit_ms, 8),
                arg(&updated, 9),
                Arg::Js(id),
            ];
            exec::run_args(conn, PATCH, &args)?;
            get_row(conn, Arg::Js(id))
        })
    }

    #[napi]
    pub fn delete_reflexion(&self, env: Env, id: JsVal) -> Result<bool> {
        self.with(&env, |core| Ok(exec::run_args(&core.conn, DELETE, &[Arg::Js(id)])? > 0))
    }

    /// pruneReflexion: `Date.now() - maxAge_ms` (JS minus), then the DELETE.
    #[napi]
    pub fn prune_reflexion(&self, env: Env, max_age_ms: JsVal, min_confidence: JsVal) -> Result<i64> {
        self.with(&env, |core| {
            if max_age_ms.is_bigint() {
                return Err(StoreError::type_error("Cannot mix BigInt and other types, use explicit conversions"));
            }
            let cutoff = Bound::num(now() as f64 - max_age_ms.to_number()?);
            Ok(exec::run_args(&core.conn, PRUNE, &[Arg::Val(&cutoff), Arg::Js(min_confidence)])? as i64)
        })
    }
}

/// A field of the parsed current row as the original held it (`type` gets its fallback).
fn current_value(cur: &Cur, col: &str) -> PV {
    let v = cur.val(col);
    if col == "type" && !value_truthy(ValueRef::from(&v)) {
        return PV::Text(b"reflexion".to_vec());
    }
    PV::Col(v)
}

/// recalcConfidence(entry) on the stored values (JS arithmetic on numbers or strings).
fn recalc_entry(entry: &Cur) -> f64 {
    let hit = entry.val("hit_count");
    if !value_truthy(ValueRef::from(&hit)) {
        return 0.5;
    }
    let h = col_number(ValueRef::from(&hit));
    if h <= 0.0 {
        return 0.5;
    }
    let s = col_number(ValueRef::from(&entry.val("success_count")));
    recalc_confidence(h, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_formula_by_hand() {
        // hit 0 / negative / NaN → 0.5
        assert_eq!(recalc_confidence(0.0, 3.0), 0.5);
        assert_eq!(recalc_confidence(-1.0, 0.0), 0.5);
        assert_eq!(recalc_confidence(f64::NAN, 0.0), 0.5);
        // hit 2, success 1: ratio .5, decay .2 → .5*.2 + .5*.8 = .5
        assert!((recalc_confidence(2.0, 1.0) - 0.5).abs() < 1e-12);
        // hit 2, success 2: 1*.2 + .5*.8 = .6
        assert!((recalc_confidence(2.0, 2.0) - 0.6).abs() < 1e-12);
        // hit 5, success 0: 0*.5 + .5*.5 = .25
        assert!((recalc_confidence(5.0, 0.0) - 0.25).abs() < 1e-12);
        // hit 20, success 15: decay 1 → .75
        assert!((recalc_confidence(20.0, 15.0) - 0.75).abs() < 1e-12);
        // hit 10, success 12 → 1.2 before the clamp, 1 after
        assert!((recalc_confidence(10.0, 12.0) - 1.2).abs() < 1e-12);
        assert_eq!(clamp01(1.2), 1.0);
        assert_eq!(clamp01(-0.3), 0.0);
        // JS: 2/3*0.3 + 0.5*0.7 exactly as f64 arithmetic
        assert_eq!(recalc_confidence(3.0, 2.0), 2.0 / 3.0 * 0.3 + 0.5 * (1.0 - 0.3));
    }

    #[test]
    fn quoted_keys() {
        let k: Vec<u16> = "a'b".encode_utf16().collect();
        match quoted_key_syntax_error(&k) {
            Some(StoreError::Sqlite { message, code }) => {
                assert_eq!(message, "near \"b\": syntax error");
                assert_eq!(code, "SQLITE_ERROR");
            }
            _ => panic!("expected a syntax error"),
        }
        let inj: Vec<u16> = "a') = ? OR 1=1 --".encode_utf16().collect();
        assert!(quoted_key_syntax_error(&inj).is_none());
        let kw: Vec<u16> = "a' OR 1".encode_utf16().collect();
        assert!(quoted_key_syntax_error(&kw).is_none());
    }

    #[test]
    fn project_slug_member() {
        assert_eq!(top_level_member("{\"a\":1,\"project_slug\":\"x\"}", "project_slug"), Some("\"x\""));
        assert_eq!(top_level_member("{\"project_slug\":\"x\",\"project_slug\":\"y\"}", "project_slug"), Some("\"y\""));
        assert_eq!(top_level_member("{\"n\":{\"project_slug\":\"x\"}}", "project_slug"), None);
        assert_eq!(top_level_member("[1]", "project_slug"), None);
        assert_eq!(decode_json_string("\"a\\u00e9\\n\""), vec![97, 0xe9, 10]);
    }
}
