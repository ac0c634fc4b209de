//! One JS value onto one parameter, as better-sqlite3's `BindValueFromJS` binds it
//! (`js::sql_value`): either straight onto a statement ([`Direct`], a Buffer's bytes read
//! in place) or into a list ([`Collect`]) for a caller that binds it later.

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use smallvec::SmallVec;

use crate::engine::js::sql_value::{bound_from_js, Bound, CANNOT_BIND, TOO_BIG};
use crate::engine::js::value::JsVal;
use crate::engine::statement::Statement;
use crate::error::{SResult, StoreError};

use super::{ParamInfo, TOO_MANY};

/// The values of one statement call by parameter index (a [`Collect`] target's list).
pub type BoundValues = SmallVec<[(usize, Bound); 8]>;

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
            stmt.bind_text(index, v.sqlite_text()?)
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
