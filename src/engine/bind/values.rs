//! One JS value onto one parameter, as better-sqlite3's `BindValueFromJS` binds it:
//! numbers as REAL, BigInt as INTEGER, strings as TEXT (as the running Node's
//! better-sqlite3 writes them for SQLite), a Buffer, typed array or DataView as a BLOB,
//! null and undefined as NULL; anything else is an error. The value goes either straight
//! onto a statement ([`Direct`], a Buffer's bytes read in place) or into a list
//! ([`Collect`]) for a caller that binds it later.

use rusqlite::ffi;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;
use smallvec::SmallVec;

use crate::engine::js::value::JsVal;
use crate::engine::statement::Statement;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::Utf8;

use super::{ParamInfo, CANNOT_BIND, TOO_BIG, TOO_MANY};

/// The values of one statement call by parameter index (a [`Collect`] target's list).
pub type BoundValues = SmallVec<[(usize, Bound); 8]>;

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

/// Where the values of a call go, parameter by parameter.
pub trait BindTarget: ParamInfo {
    /// Binds a caller's JS value to parameter `index` (1-based, within the count).
    fn put(&mut self, index: usize, value: &JsVal) -> SResult<()>;
    /// Binds a value the store computed.
    fn put_computed(&mut self, index: usize, value: &Bound) -> SResult<()>;
}

/// Straight onto a statement, as better-sqlite3 binds: the caller clears the bindings
/// when one fails.
pub struct Direct<'s>(pub &'s mut Statement);

impl ParamInfo for Direct<'_> {
    fn parameter_count(&self) -> usize {
        self.0.parameter_count()
    }
    fn parameter_name(&self, index: usize) -> Option<&str> {
        self.0.parameter_name(index)
    }
}

impl BindTarget for Direct<'_> {
    fn put(&mut self, index: usize, v: &JsVal) -> SResult<()> {
        let stmt = &mut *self.0;
        let rc = if let Some(n) = v.number() {
            stmt.bind(index, ValueRef::Real(n))
        } else if let Some((n, lossless)) = v.bigint_i64() {
            if !lossless {
                return Err(StoreError::range_error(TOO_BIG));
            }
            stmt.bind(index, ValueRef::Integer(n))
        } else if v.is_string() {
            stmt.bind(index, ValueRef::Text(&v.sqlite_text()?))
        } else if v.is_buffer()? {
            v.with_buffer_bytes(|bytes| stmt.bind(index, ValueRef::Blob(bytes)))?
        } else if v.is_nullish() {
            stmt.bind(index, ValueRef::Null)
        } else {
            return Err(StoreError::type_error(CANNOT_BIND));
        };
        checked(rc)
    }

    fn put_computed(&mut self, index: usize, value: &Bound) -> SResult<()> {
        checked(self.0.bind(index, ValueRef::from(value)))
    }
}

/// Into a list, for a statement described by `P` (the store binds values it computed
/// for one statement onto another, or places them itself).
pub struct Collect<'p, P: ParamInfo + ?Sized> {
    pub params: &'p P,
    pub out: &'p mut BoundValues,
}

impl<P: ParamInfo + ?Sized> ParamInfo for Collect<'_, P> {
    fn parameter_count(&self) -> usize {
        self.params.parameter_count()
    }
    fn parameter_name(&self, index: usize) -> Option<&str> {
        self.params.parameter_name(index)
    }
}

impl<P: ParamInfo + ?Sized> BindTarget for Collect<'_, P> {
    fn put(&mut self, index: usize, value: &JsVal) -> SResult<()> {
        let value = bound_from_js(value)?;
        self.place(index, value)
    }

    fn put_computed(&mut self, index: usize, value: &Bound) -> SResult<()> {
        self.place(index, value.clone())
    }
}

impl<P: ParamInfo + ?Sized> Collect<'_, P> {
    /// Past the last parameter is SQLite's SQLITE_RANGE, as binding it would be.
    fn place(&mut self, index: usize, value: Bound) -> SResult<()> {
        if index == 0 || index > self.params.parameter_count() {
            return checked(ffi::SQLITE_RANGE);
        }
        self.out.push((index, value));
        Ok(())
    }
}

/// Binds collected values onto a raw statement, with better-sqlite3's errors where SQLite
/// refuses one (the bindings are cleared then).
pub fn bind_raw(stmt: &mut Statement, values: &[(usize, Bound)]) -> SResult<()> {
    for (index, v) in values {
        if let Err(error) = checked(stmt.bind(*index, ValueRef::from(v))) {
            stmt.clear_bindings();
            return Err(error);
        }
    }
    Ok(())
}

/// better-sqlite3's error for the status SQLite gave binding a value.
fn checked(rc: i32) -> SResult<()> {
    match rc {
        ffi::SQLITE_OK => Ok(()),
        ffi::SQLITE_TOOBIG => Err(StoreError::range_error(TOO_BIG)),
        ffi::SQLITE_RANGE => Err(StoreError::range_error(TOO_MANY)),
        ffi::SQLITE_NOMEM => Err(StoreError::error("Out of memory")),
        _ => Err(StoreError::error(
            "An unexpected error occured while trying to bind parameters",
        )),
    }
}
