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
use napi_derive::napi;
use rusqlite::types::ValueRef;

use crate::js::bind::{apply, bind_args_with, bound_from_js, Anonymous, Arg, Bound};
use crate::js::json_in::is_valid_json;
use crate::js::json_out::{JsonOut, RAW, REFLEXION};
use crate::js::model::Val;
use crate::js::throw::Throw;
use crate::js::v8::{Compare, V8};
use crate::js::value::{js_input, wtf8_from_utf16, JsVal};
use crate::native_db::NativeDb;
use crate::sqlite::error::{SResult, StoreError};
use crate::store::now;
use crate::store::queries::{self as exec, read_row, read_rows_where, Row};

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[
    DELETE,
    FIND_EXACT,
    FIND_LIKE,
    GET,
    HIT_ONLY,
    HIT_SUCCESS,
    INSERT,
    LIST,
    PATCH,
    PRUNE,
    SET_CONFIDENCE,
];

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
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$' || !c.is_ascii())
        .collect();
    let upper = word.to_ascii_uppercase();
    if CONTINUATION_KEYWORDS.contains(&upper.as_str()) || crate::sqlite::raw::is_keyword(&word) {
        return None;
    }
    Some(StoreError::sqlite(
        rusqlite::ffi::SQLITE_ERROR,
        format!("near \"{word}\": syntax error"),
    ))
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
fn find_rows(
    out: &mut JsonOut,
    conn: &rusqlite::Connection,
    sql: &str,
    args: &[Arg<'_>],
    paths: &[Bound],
) -> SResult<usize> {
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

/// `parseJson(adaptive_state_json, {})?.project_slug === slug`, with V8's own parse and
/// `===` (stored JSON is first checked by serde_json, as parseJson's try/catch would).
fn project_slug_matches(v8: &V8, stored: ValueRef<'_>, slug: &JsVal) -> SResult<bool> {
    let text = match stored {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        _ => return Ok(false),
    };
    if !is_valid_json(&text) {
        return Ok(false);
    }
    let parsed = v8.parse(&text)?;
    if parsed.is_nullish() {
        return Ok(false);
    }
    let member = parsed.get(c"project_slug")?;
    v8.strict_equals(member.raw(), slug.raw())
}

js_input!(
    /// addReflexion's fields, defaults applied by the glue.
    AddReflexionInput { entry_type, error_pattern, error_message, context, solution, solution_code, adaptive_state, confidence, hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms }
);

#[napi]
impl NativeDb {
    /// addReflexion (the glue applies the destructuring defaults).
    #[napi]
    pub fn add_reflexion(&self, env: Env, input: JsVal) -> Result<String> {
        let AddReflexionInput {
            entry_type,
            error_pattern,
            error_message,
            context,
            solution,
            solution_code,
            adaptive_state,
            confidence,
            hit_count,
            success_count,
            last_hit_ms,
            created_at_ms,
            updated_at_ms,
        } = AddReflexionInput::read(&input).map_err(|e| e.throw(env.raw()))?;
        let js = V8::new(&env);
        self.with_atomic(&env, |conn| {
            let now = now();
            let id = crate::store::uuid7::next();
            let context_json = Val::from_js(context)?.stringify(&js)?;
            let adaptive_json = Val::from_js(adaptive_state)?.stringify(&js)?;
            let or_now = |v: &JsVal| -> SResult<Bound> {
                if v.is_nullish() {
                    Ok(Bound::num(now as f64))
                } else {
                    bound_from_js(v)
                }
            };
            let params = [
                Bound::text(&id),
                bound_from_js(&entry_type)?,
                bound_from_js(&error_pattern)?,
                bound_from_js(&error_message)?,
                Bound::json(context_json),
                bound_from_js(&solution)?,
                bound_from_js(&solution_code)?,
                Bound::json(adaptive_json),
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
            let keys = JsVal::own_keys(&context)?;
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
                if exec::write_rows(&mut out, &core.conn, FIND_EXACT, &[Arg::Js(error_pattern)], &REFLEXION)? > 0 {
                    return Ok(out.finish());
                }
                let pattern = like_pattern(&error_pattern)?;
                return exec::rows_text(&core.conn, FIND_LIKE, &[Arg::Val(&pattern)], &REFLEXION);
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
            if let Some(entry) = read_row(conn, GET, &[Arg::Js(id)], &RAW)? {
                let hit_n = entry.get("hit_count").number()?;
                // entry.hit_count > 0 (a string compares as a number here too)
                if hit_n > 0.0 {
                    let conf = recalc_entry(&entry)?;
                    let conf_b = Bound::num(clamp01(conf));
                    exec::run_args(
                        conn,
                        SET_CONFIDENCE,
                        &[Arg::Val(&conf_b), Arg::Val(&now_b), Arg::Js(id)],
                    )?;
                }
            }
            get_row(conn, Arg::Js(id))
        })
    }

    /// listReflexion: every row (confidence DESC, updated_at_ms DESC), filtered like the
    /// original's three JS filters.
    #[napi]
    pub fn list_reflexion(
        &self,
        env: Env,
        entry_type: JsVal,
        min_confidence: JsVal,
        project_slug: JsVal,
    ) -> Result<String> {
        let v8 = V8::new(&env);
        self.with(&env, |core| {
            let wanted_type = if entry_type.truthy() {
                Some(Val::from_js(entry_type)?)
            } else {
                None
            };
            let min = Val::from_js(min_confidence)?;
            let slug = if project_slug.truthy() {
                Some(project_slug)
            } else {
                None
            };
            let kept = read_rows_where(&core.conn, LIST, &[], &REFLEXION, None, |row| {
                // e.type === type, with parseReflexionRow's `rest.type || "reflexion"`
                if let Some(want) = &wanted_type {
                    if !current_value(row, "type").strict_eq(want)? {
                        return Ok(false);
                    }
                }
                // entry.confidence >= minConfidence, once per row as the original's filter did
                if !row.get("confidence").compare(Compare::Ge, &min, &v8)? {
                    return Ok(false);
                }
                match &slug {
                    Some(slug) => project_slug_matches(&v8, row.get("adaptive_state_json").as_column(), slug),
                    None => Ok(true),
                }
            })?;
            let mut out = JsonOut::new();
            out.buf.push('[');
            for (i, row) in kept.iter().enumerate() {
                if i > 0 {
                    out.buf.push(',');
                }
                out.piece(&row.json());
            }
            out.buf.push(']');
            Ok(out.finish())
        })
    }

    /// patchReflexion: `{...current, ...patch}` over the fixed column list.
    #[napi]
    pub fn patch_reflexion(&self, env: Env, id: JsVal, patch: JsVal) -> Result<String> {
        let js = V8::new(&env);
        self.with_atomic(&env, |conn| {
            let Some(cur) = read_row(conn, GET, &[Arg::Js(id)], &RAW)? else {
                return Ok("null".to_string());
            };
            let now = now();
            // {...patch}: own keys of an object patch override the current values.
            let spread = |key: &std::ffi::CStr, col: &str| -> SResult<Val> {
                if (patch.is_object() || patch.is_function()) && patch.has_own(key)? {
                    Val::from_js(patch.get(key)?)
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
            let context = Val::from_js(patch.get(c"context")?)?;
            let adaptive = Val::from_js(patch.get(c"adaptive_state")?)?;
            let updated = Val::from_js(patch.get(c"updated_at_ms")?)?;
            let context_json = if context.nullish() {
                Some(
                    js.reparse(cur.get("context_json").as_column(), "{}")?
                        .unwrap_or_else(|| b"{}".to_vec()),
                )
            } else {
                context.stringify(&js)?
            };
            let adaptive_json = if adaptive.nullish() {
                Some(
                    js.reparse(cur.get("adaptive_state_json").as_column(), "{}")?
                        .unwrap_or_else(|| b"{}".to_vec()),
                )
            } else {
                adaptive.stringify(&js)?
            };
            let updated = if updated.nullish() {
                Val::Num(now as f64)
            } else {
                updated
            };
            let solution_code = if solution_code.nullish() {
                Val::Null
            } else {
                solution_code
            };
            let texts = [Bound::json(context_json), Bound::json(adaptive_json)];
            let fixed: Vec<Bound> = [
                &ty,
                &error_pattern,
                &error_message,
                &solution,
                &solution_code,
                &confidence,
                &hit_count,
                &success_count,
                &last_hit_ms,
                &updated,
            ]
            .iter()
            .map(|v| match v {
                // A caller's object is bound by better-sqlite3's rules below.
                Val::Js(_) => Ok(Bound::Null),
                other => other.bound(),
            })
            .collect::<SResult<_>>()?;
            let arg = |v: &Val, i: usize| -> Arg<'_> {
                match v {
                    Val::Js(j) => Arg::Js(*j),
                    _ => fixed.get(i).map_or(Arg::Val(&Bound::Null), Arg::Val),
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
                return Err(StoreError::type_error(
                    "Cannot mix BigInt and other types, use explicit conversions",
                ));
            }
            let cutoff = Bound::num(now() as f64 - max_age_ms.to_number()?);
            Ok(exec::run_args(&core.conn, PRUNE, &[Arg::Val(&cutoff), Arg::Js(min_confidence)])? as i64)
        })
    }
}

/// A field of the parsed current row as the original held it (`type` gets its fallback).
fn current_value(cur: &Row, col: &str) -> Val {
    let v = cur.get(col);
    if col == "type" && !v.truthy() {
        return Val::text("reflexion");
    }
    v
}

/// recalcConfidence(entry) on the stored values (JS arithmetic on numbers or strings).
fn recalc_entry(entry: &Row) -> SResult<f64> {
    let hit = entry.get("hit_count");
    if !hit.truthy() {
        return Ok(0.5);
    }
    let h = hit.number()?;
    if h <= 0.0 {
        return Ok(0.5);
    }
    Ok(recalc_confidence(h, entry.get("success_count").number()?))
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
}
