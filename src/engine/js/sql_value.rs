//! One value crossing between SQLite and JS, as better-sqlite3 converts it: a SQLite value
//! as a JS value (`Data::GetValueJS`: every number a double, an INTEGER a BigInt with safe
//! integers on, TEXT a string decoded as V8 decodes UTF-8, a BLOB a Buffer of its own,
//! NULL null) for rows, user-function arguments and pragmas; and a JS value as a value to
//! bind (`BindValueFromJS`: numbers as REAL, BigInt as INTEGER, strings as TEXT as the
//! running Node's better-sqlite3 writes them, a Buffer, typed array or DataView as a
//! BLOB, null and undefined as NULL; anything else is an error) for parameters and
//! user-function results.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;

use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw, Utf8};

pub const CANNOT_BIND: &str = "SQLite3 can only bind numbers, strings, bigints, buffers, and null";
pub const TOO_BIG: &str = "The bound string, buffer, or bigint is too big";

/// The longest BLOB handed to a JS side that wraps it (see [`value_js_wrapped`]): up to
/// about this size, an ArrayBuffer wrapped by JS costs less than a Buffer made through
/// Node-API; past it the ArrayBuffer's zeroing costs more.
const WRAPPED_BLOB_MAX: usize = 1024;

pub fn value_js(js: Napi, v: ValueRef<'_>, safe_integers: bool) -> SResult<Raw> {
    match v {
        ValueRef::Null => js.null(),
        ValueRef::Integer(n) if safe_integers => js.bigint(n),
        ValueRef::Integer(n) => js.number(n as f64),
        ValueRef::Real(f) => js.number(f),
        ValueRef::Text(t) => js.text(t),
        ValueRef::Blob(b) => js.buffer_copy(b),
    }
}

/// [`value_js`] for a caller whose JS side turns every ArrayBuffer it gets into a Buffer
/// (`Buffer.from(arrayBuffer)`: the same Buffer, over memory of its own): a small BLOB
/// crosses as an ArrayBuffer. The flag says whether JS has to wrap this value.
#[inline]
pub fn value_js_wrapped(js: Napi, v: ValueRef<'_>, safe_integers: bool) -> SResult<(Raw, bool)> {
    match v {
        // TEXT straight to its string: the common argument and column skips a second match.
        ValueRef::Text(t) => Ok((js.text(t)?, false)),
        ValueRef::Blob(b) if b.len() <= WRAPPED_BLOB_MAX => Ok((js.arraybuffer_copy(b)?, true)),
        _ => Ok((value_js(js, v, safe_integers)?, false)),
    }
}

/// A value ready to bind, owned so that JS reads happen before SQLite runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Null,
    Int(i64),
    Real(f64),
    Text(Utf8),
    Blob(Vec<u8>),
}

impl<'a> From<&'a Bound> for ValueRef<'a> {
    fn from(b: &'a Bound) -> Self {
        match b {
            Bound::Null => ValueRef::Null,
            Bound::Int(v) => ValueRef::Integer(*v),
            Bound::Real(v) => ValueRef::Real(*v),
            Bound::Text(v) => ValueRef::Text(v),
            Bound::Blob(v) => ValueRef::Blob(v),
        }
    }
}

impl ToSql for Bound {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::from(self)))
    }
}

impl Bound {
    pub fn text(s: &str) -> Bound {
        Bound::Text(Utf8::from_slice(s.as_bytes()))
    }
    /// A number computed in Rust, bound the way a JS number would be (REAL).
    pub fn num(v: f64) -> Bound {
        Bound::Real(v)
    }
    /// A JSON text the store computed, or NULL where `JSON.stringify` gave undefined
    /// (or the value was null).
    pub fn json(text: Option<Vec<u8>>) -> Bound {
        text.map_or(Bound::Null, |bytes| Bound::Text(Utf8::from_vec(bytes)))
    }
}

/// better-sqlite3's `BindValueFromJS`: the value or the error it would throw.
pub fn bound_from_js(v: &JsVal) -> SResult<Bound> {
    if let Some(n) = v.number() {
        return Ok(Bound::Real(n));
    }
    if let Some((i, lossless)) = v.bigint_i64() {
        return if lossless {
            Ok(Bound::Int(i))
        } else {
            Err(StoreError::range_error(TOO_BIG))
        };
    }
    if v.is_string() {
        return Ok(Bound::Text(v.sqlite_text()?));
    }
    if v.is_buffer()? {
        return Ok(Bound::Blob(v.buffer_bytes()?));
    }
    if v.is_nullish() {
        return Ok(Bound::Null);
    }
    Err(StoreError::type_error(CANNOT_BIND))
}
