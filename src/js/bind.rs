//! Binding JS values to statement parameters exactly as better-sqlite3 12 does:
//! numbers bind as REAL, strings as TEXT (WTF-8), BigInt as INTEGER, buffers as BLOB,
//! null/undefined as NULL, and anything else throws.

use rusqlite::ffi;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;
use smallvec::SmallVec;

use crate::error::{SResult, StoreError};
use crate::js::napi::{Napi, Raw, Utf8};
use crate::js::value::JsVal;
use crate::sqlite::raw::RawStmt;

/// The values of one statement call by parameter index, as [`bind_args_with`] computes them.
pub type BoundValues = SmallVec<[(usize, Bound); 8]>;

/// The arguments of one statement call.
pub type Args<'a> = SmallVec<[Arg<'a>; 8]>;

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

pub const CANNOT_BIND: &str = "SQLite3 can only bind numbers, strings, bigints, buffers, and null";
pub const TOO_BIG: &str = "The bound string, buffer, or bigint is too big";
pub const TOO_MANY: &str = "Too many parameter values were provided";
pub const TOO_FEW: &str = "Too few parameter values were provided";

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

/// One argument of a `stmt.run(...args)` call: a caller's JS value (spread or taken
/// as named parameters by the rules below) or a value the store computed.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Js(JsVal),
    Val(&'a Bound),
}

/// What [`bind_args_with`] needs to know about a prepared statement's parameters
/// (implemented for rusqlite statements and for the facade's raw statements).
pub trait ParamInfo {
    fn parameter_count(&self) -> usize;
    /// The parameter's name including its prefix (`@a`, `:a`, `$a`, `?1`), or None.
    fn parameter_name(&self, index: usize) -> Option<&str>;
}

/// A statement shape of `n` anonymous `?` parameters (for statements whose first
/// parameters take the caller's values positionally and the rest store-computed ones).
pub struct Anonymous(pub usize);

impl ParamInfo for Anonymous {
    fn parameter_count(&self) -> usize {
        self.0
    }
    fn parameter_name(&self, _index: usize) -> Option<&str> {
        None
    }
}

impl ParamInfo for RawStmt {
    fn parameter_count(&self) -> usize {
        RawStmt::parameter_count(self)
    }
    fn parameter_name(&self, index: usize) -> Option<&str> {
        RawStmt::parameter_name(self, index)
    }
}

/// [`bind_args`] for any statement that can describe its parameters.
pub fn bind_args_with<P: ParamInfo + ?Sized>(stmt: &P, args: &[Arg<'_>]) -> SResult<BoundValues> {
    let mut out = BoundValues::new();
    bind_args_into(stmt, args, &mut out)?;
    Ok(out)
}

/// [`bind_args_with`] into the caller's list: a statement call's values stay where the
/// caller made room for them (a list returned by value is copied whole, inline part
/// included, at each step).
pub fn bind_args_into<P: ParamInfo + ?Sized>(stmt: &P, args: &[Arg<'_>], out: &mut BoundValues) -> SResult<()> {
    let param_count = stmt.parameter_count();
    // Named parameters (without their prefix), looked up only when a plain object is bound.
    let named = || -> Vec<(usize, String)> {
        (1..=param_count)
            .filter_map(|i| {
                stmt.parameter_name(i)
                    .map(|n| (i, n.get(1..).unwrap_or_default().to_string()))
            })
            .collect()
    };
    let has_named = || (1..=param_count).any(|i| stmt.parameter_name(i).is_some());
    let mut anon_index = 0usize;
    let mut next_anon = |stmt: &P| {
        anon_index += 1;
        while anon_index <= param_count && stmt.parameter_name(anon_index).is_some() {
            anon_index += 1;
        }
        anon_index
    };
    out.clear();
    out.reserve(param_count);
    let mut count = 0usize;
    let mut bound_object = false;
    let place = |out: &mut BoundValues, index: usize, b: Bound| -> SResult<()> {
        if index > param_count || index == 0 {
            return Err(StoreError::range_error(TOO_MANY));
        }
        out.push((index, b));
        Ok(())
    };
    for arg in args {
        let arg = match arg {
            Arg::Val(b) => {
                let index = next_anon(stmt);
                place(out, index, (*b).clone())?;
                count += 1;
                continue;
            }
            Arg::Js(v) => v,
        };
        if arg.is_array()? {
            for i in 0..arg.array_len()? {
                let value = bound_from_js(&arg.element(i)?)?;
                let index = next_anon(stmt);
                place(out, index, value)?;
                count += 1;
            }
            continue;
        }
        if (arg.is_object() || arg.is_function()) && !arg.is_buffer()? {
            if arg.is_plain_object()? {
                if bound_object {
                    return Err(StoreError::type_error(
                        "You cannot specify named parameters in two different objects",
                    ));
                }
                bound_object = true;
                for (index, name) in named() {
                    let key = std::ffi::CString::new(name.as_str()).unwrap_or_default();
                    if !arg.has_own(&key)? {
                        return Err(StoreError::range_error(format!("Missing named parameter \"{name}\"")));
                    }
                    let value = bound_from_js(&arg.get(&key)?)?;
                    place(out, index, value)?;
                    count += 1;
                }
                continue;
            } else if has_named() {
                return Err(StoreError::type_error(
                    "Named parameters can only be passed within plain objects",
                ));
            }
        }
        let value = bound_from_js(arg)?;
        let index = next_anon(stmt);
        place(out, index, value)?;
        count += 1;
    }
    if count != param_count {
        if count < param_count {
            if !bound_object && has_named() {
                return Err(StoreError::type_error("Missing named parameters"));
            }
            return Err(StoreError::range_error(TOO_FEW));
        }
        return Err(StoreError::range_error(TOO_MANY));
    }
    Ok(())
}

/// Binds computed values onto a raw statement, with better-sqlite3's errors where SQLite
/// refuses one (the bindings are cleared then).
pub fn bind_raw(stmt: &mut RawStmt, values: &[(usize, Bound)]) -> SResult<()> {
    for (index, v) in values {
        let rc = stmt.bind(*index, ValueRef::from(v));
        if rc != ffi::SQLITE_OK {
            stmt.clear_bindings();
            return Err(match rc {
                ffi::SQLITE_TOOBIG => StoreError::range_error(TOO_BIG),
                ffi::SQLITE_RANGE => StoreError::range_error(TOO_MANY),
                ffi::SQLITE_NOMEM => StoreError::error("Out of memory"),
                _ => StoreError::error("An unexpected error occured while trying to bind parameters"),
            });
        }
    }
    Ok(())
}

/// The arguments of a variadic native call (`js::napi::Variadic`) as they were passed.
pub fn args_into<'a>(napi: Napi, raw: &[Raw], out: &mut Args<'a>) -> SResult<()> {
    for &v in raw {
        out.push(Arg::Js(JsVal::wrap(napi, v)?));
    }
    Ok(())
}

/// The arguments of a JS call, as the glue's rest parameter gathered them in an array.
pub fn args_of<'a>(params: &JsVal) -> SResult<Args<'a>> {
    let len = params.array_len()?;
    let mut out = Args::with_capacity(len as usize);
    for i in 0..len {
        out.push(Arg::Js(params.element(i)?));
    }
    Ok(out)
}
