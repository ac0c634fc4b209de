//! The few JavaScript operators the original applied to caller values, reproduced
//! exactly: `now + x` (number addition or string concatenation) and the clamps built
//! on `Number(x)`.

use rusqlite::types::ValueRef;

use crate::js::bind::Bound;
use crate::sqlite::error::{SResult, StoreError};
use crate::js::value::JsVal;
use crate::js::json_out::JsonOut;

/// The value of `now + x`.
#[derive(Debug, Clone)]
pub enum Sum {
    Num(f64),
    /// String concatenation happened (x was a string or an object).
    Text(String),
}

pub fn add_to_now(now: i64, x: &JsVal) -> SResult<Sum> {
    if let Some(n) = x.number() {
        return Ok(Sum::Num(now as f64 + n));
    }
    if x.is_null() {
        return Ok(Sum::Num(now as f64));
    }
    if x.is_undefined() {
        return Ok(Sum::Num(f64::NAN));
    }
    if let Some(b) = x.bool_value() {
        return Ok(Sum::Num(now as f64 + if b { 1.0 } else { 0.0 }));
    }
    if x.is_bigint() {
        return Err(StoreError::type_error("Cannot mix BigInt and other types, use explicit conversions"));
    }
    let s = x.to_js_string()?;
    Ok(Sum::Text(format!("{now}{}", String::from_utf8_lossy(&s))))
}

impl Sum {
    pub fn bound(&self) -> Bound {
        match self {
            Sum::Num(n) => Bound::num(*n),
            Sum::Text(s) => Bound::text(s),
        }
    }

    pub fn write(&self, out: &mut JsonOut) {
        match self {
            Sum::Num(n) => out.num(*n),
            Sum::Text(s) => out.str(s),
        }
    }

    /// `Number(column) === this`
    pub fn equals_number_of(&self, col: ValueRef<'_>) -> bool {
        let Sum::Num(n) = self else { return false };
        let c = match col {
            ValueRef::Integer(i) => i as f64,
            ValueRef::Real(f) => f,
            ValueRef::Null => 0.0,
            _ => return false,
        };
        c == *n
    }
}

/// `x || uuidv7()` for trace and correlation ids: the caller's value when truthy, else a
/// fresh id (also returned, so callers can report it).
pub fn or_new_id(v: &JsVal) -> SResult<(Bound, Option<String>)> {
    if v.truthy() {
        Ok((crate::js::bind::bound_from_js(v)?, None))
    } else {
        let id = crate::store::uuid7::next();
        Ok((Bound::text(&id), Some(id)))
    }
}

/// `clampMaxMessages` / `clampPriority` / `clampDurationMs`: `Number(v)`, non-finite
/// gives the fallback, else truncate and clamp to [min, max].
pub fn clamp_number(v: &JsVal, fallback: f64, min: f64, max: f64) -> SResult<f64> {
    let n = v.to_number()?;
    Ok(clamp_finite(n, fallback, min, max))
}

pub fn clamp_finite(n: f64, fallback: f64, min: f64, max: f64) -> f64 {
    if !n.is_finite() {
        return fallback;
    }
    n.trunc().min(max).max(min)
}

#[cfg(test)]
mod tests {
    use super::clamp_finite;

    #[test]
    fn clamps_truncate_then_bound() {
        assert_eq!(clamp_finite(0.0, 20.0, 1.0, 100.0), 1.0);
        assert_eq!(clamp_finite(500.0, 20.0, 1.0, 100.0), 100.0);
        assert_eq!(clamp_finite(7.9, 5.0, 1.0, 9.0), 7.0);
        assert_eq!(clamp_finite(f64::NAN, 20.0, 1.0, 100.0), 20.0);
        assert_eq!(clamp_finite(f64::INFINITY, 600000.0, 1000.0, 86400000.0), 600000.0);
    }
}
