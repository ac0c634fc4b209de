//! Reflexion memory: the statements of add/get/find/hit/list/patch/delete/prune, and
//! findReflexion's query for context keys.
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

use super::parsed_rows::REFLEXION;
use super::query::query;
use super::stmt::Stmt;
use crate::engine::bind::{args_of, bind_args_with, Anonymous, Arg};
use crate::engine::connection::with_handle;
use crate::engine::js::sql_value::Bound;
use crate::engine::js::value::{sqlite_text_from_utf16, JsVal};
use crate::error::{SResult, StoreError};
use crate::ffi::napi::returned::Returned;
use crate::ffi::napi::{Napi, Utf8};

pub(super) const STATEMENTS: &[Stmt] = &[
    Stmt::new(
        "insertReflexion",
        "INSERT INTO reflexion_entries (id, type, error_pattern, error_message, context_json, solution, solution_code, adaptive_state_json, confidence, hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms)
 VALUES (@id, @type, @error_pattern, @error_message, @context_json, @solution, @solution_code, @adaptive_state_json, @confidence, @hit_count, @success_count, @last_hit_ms, @created_at_ms, @updated_at_ms)",
    ),
    Stmt::new("getReflexionById", "SELECT * FROM reflexion_entries WHERE id = ?").rows(&REFLEXION),
    Stmt::new("findReflexionExact", "SELECT * FROM reflexion_entries WHERE error_pattern = ? ORDER BY confidence DESC")
        .rows(&REFLEXION),
    Stmt::new(
        "findReflexionLike",
        "SELECT * FROM reflexion_entries WHERE error_pattern LIKE ? ESCAPE '\\' ORDER BY confidence DESC LIMIT 10",
    )
    .rows(&REFLEXION),
    Stmt::new(
        "updateReflexionHitSuccess",
        "UPDATE reflexion_entries SET hit_count = hit_count + 1, success_count = success_count + 1, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?",
    ),
    Stmt::new(
        "updateReflexionHitOnly",
        "UPDATE reflexion_entries SET hit_count = hit_count + 1, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?",
    ),
    Stmt::new("updateReflexionConfidence", "UPDATE reflexion_entries SET confidence = ?, updated_at_ms = ? WHERE id = ?"),
    Stmt::new("pruneReflexionEntries", "DELETE FROM reflexion_entries WHERE updated_at_ms < ? AND confidence < ?"),
    Stmt::new(
        "listReflexionEntries",
        "SELECT * FROM reflexion_entries ORDER BY confidence DESC, updated_at_ms DESC",
    )
    .rows(&REFLEXION),
    Stmt::new("deleteReflexionEntry", "DELETE FROM reflexion_entries WHERE id = ?"),
    // patchReflexion's fixed column list (the original built this text on each call).
    Stmt::new(
        "patchReflexion",
        "UPDATE reflexion_entries SET type = ?, error_pattern = ?, error_message = ?, context_json = ?, solution = ?, solution_code = ?, adaptive_state_json = ?, confidence = ?, hit_count = ?, success_count = ?, last_hit_ms = ?, updated_at_ms = ? WHERE id = ?",
    )
    .per_call(),
];

/// Words that may follow a string literal and continue an expression: after a key like
/// `a' AND x`, the original's SQL did not fail at the word.
const CONTINUATION_KEYWORDS: [&str; 16] = [
    "AND", "OR", "IS", "NOT", "IN", "LIKE", "GLOB", "MATCH", "REGEXP", "BETWEEN", "COLLATE", "ESCAPE", "ISNULL",
    "NOTNULL", "NULLS", "FILTER",
];

/// The original pasted each key into `json_extract(context_json, '$.<key>')`. For a key
/// with a `'` whose text after the quote starts with a plain identifier, that SQL was a
/// syntax error at that identifier; reproduce that error without building the SQL.
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
    if CONTINUATION_KEYWORDS.contains(&upper.as_str()) || crate::ffi::sqlite::is_keyword(&word) {
        return None;
    }
    Some(StoreError::sqlite(
        rusqlite::ffi::SQLITE_ERROR,
        format!("near \"{word}\": syntax error"),
    ))
}

/// The exact or LIKE query with one `json_extract(context_json, ?) = ?` per context key:
/// the original's SQL text with each pasted path replaced by a parameter. Parameters are
/// numbered in the order they appear (pattern, then path and value per key), so a
/// context too large for SQLite fails as the original's did, on the expression's depth,
/// before any parameter number runs out.
fn context_sql(like: bool, n: usize) -> String {
    let filter = " AND json_extract(context_json, ?) = ?".repeat(n);
    if like {
        format!("SELECT * FROM reflexion_entries WHERE error_pattern LIKE ? ESCAPE '\\'{filter} ORDER BY confidence DESC LIMIT 10")
    } else {
        format!("SELECT * FROM reflexion_entries WHERE error_pattern = ?{filter} ORDER BY confidence DESC")
    }
}

/// Where the `k`th value bound in the original's order goes in [`context_sql`]: the
/// caller's pattern and `n` values first (as the original bound them, so their errors come
/// in its order), then the `n` paths.
fn context_parameter(k: usize, n: usize) -> usize {
    match k {
        1 => 1,
        value if value <= n + 1 => 2 * (value - 1) + 1,
        path => 2 * (path - n - 1),
    }
}

/// findReflexion with context: `keys` are the context keys whose value is not null,
/// `params` the pattern (exact, or the LIKE pattern) and their values, as the original
/// passed them to `.all(pattern, ...values)`.
#[napi]
pub fn store_find_reflexion(env: Env, db: u32, like: bool, keys: Vec<JsVal>, params: JsVal) -> Result<Returned> {
    with_handle(&env, db, |core| {
        let keys: Vec<Vec<u16>> = keys.iter().map(JsVal::utf16).collect::<SResult<_>>()?;
        // Where the original's SQL text was a syntax error, fail the same way.
        if let Some(quoted) = keys.iter().find(|k| k.contains(&(b'\'' as u16))) {
            if let Some(e) = quoted_key_syntax_error(quoted) {
                return Err(e);
            }
        }
        let napi = Napi::new(env.raw());
        let paths: Vec<Bound> = keys
            .iter()
            .map(|k| {
                let mut units: Vec<u16> = "$.".encode_utf16().collect();
                units.extend_from_slice(k);
                Bound::Text(Utf8::from_vec(sqlite_text_from_utf16(napi, &units)))
            })
            .collect();
        let mut args = args_of(&params)?;
        args.extend(paths.iter().map(Arg::Val));
        let n = keys.len();
        query(
            core,
            napi,
            &context_sql(like, n),
            |_| {
                let values = bind_args_with(napi, &Anonymous(1 + 2 * n), &args)?;
                Ok(values
                    .into_iter()
                    .map(|(k, value)| (context_parameter(k, n), value))
                    .collect())
            },
            &REFLEXION,
        )
        .map(Returned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_keys() {
        let k: Vec<u16> = "a'b".encode_utf16().collect();
        match quoted_key_syntax_error(&k) {
            Some(StoreError::Sqlite { message, code }) => {
                assert_eq!(message.as_deref(), Some("near \"b\": syntax error"));
                assert_eq!(code, rusqlite::ffi::SQLITE_ERROR);
            }
            _ => panic!("expected a syntax error"),
        }
        let inj: Vec<u16> = "a') = ? OR 1=1 --".encode_utf16().collect();
        assert!(quoted_key_syntax_error(&inj).is_none());
        let kw: Vec<u16> = "a' OR 1".encode_utf16().collect();
        assert!(quoted_key_syntax_error(&kw).is_none());
    }

    #[test]
    fn context_parameters_in_order_of_appearance() {
        assert_eq!(
            context_sql(false, 2),
            "SELECT * FROM reflexion_entries WHERE error_pattern = ? AND json_extract(context_json, ?) = ? \
             AND json_extract(context_json, ?) = ? ORDER BY confidence DESC"
        );
        // pattern, value 1, value 2, path 1, path 2 -> ?1, ?3, ?5, ?2, ?4
        let placed: Vec<usize> = (1..=5).map(|k| context_parameter(k, 2)).collect();
        assert_eq!(placed, [1, 3, 5, 2, 4]);
    }
}
