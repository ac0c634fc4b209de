//! The one model of JS values the store computes with: a caller's value, a number the
//! store computed, a column value as better-sqlite3 hands it to JS, or a parsed stored
//! JSON value. Its operations are JavaScript's (`??`, truthiness, `Number(x)`, `===`,
//! `+ 1`, `String(x)`, `JSON.stringify`), done in Rust for primitives and by V8 itself
//! for anything a caller's object could customise.

use rusqlite::types::ValueRef;

use crate::js::bind::{bound_from_js, Bound};
use crate::js::calc::str_to_number;
use crate::js::json_out::JsonOut;
use crate::js::v8::{Compare, V8};
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;
use napi::sys;

#[derive(Clone)]
pub enum Val {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    /// A string's content as WTF-8: a caller's lone surrogates are kept; column text is
    /// decoded as V8 decodes it (invalid UTF-8 becomes U+FFFD).
    Str(Vec<u8>),
    /// A BLOB column: a fresh Buffer, never `===` anything.
    Buffer(Vec<u8>),
    /// A parsed stored JSON value other than null, kept as the text `JSON.stringify`
    /// gives for it.
    Json(Vec<u8>),
    /// Any other caller value (BigInt, object, symbol, function), still in V8.
    Js(JsVal),
}

impl Val {
    /// A caller's value: primitives are read once, everything else stays in V8.
    pub fn from_js(v: JsVal) -> SResult<Val> {
        Ok(if v.is_undefined() {
            Val::Undefined
        } else if v.is_null() {
            Val::Null
        } else if let Some(n) = v.number() {
            Val::Num(n)
        } else if let Some(b) = v.bool_value() {
            Val::Bool(b)
        } else if v.is_string() {
            Val::Str(v.wtf8()?)
        } else {
            Val::Js(v)
        })
    }

    /// A column value as better-sqlite3 returns it to JS (every number a double).
    pub fn from_column(v: ValueRef<'_>) -> Val {
        match v {
            ValueRef::Null => Val::Null,
            ValueRef::Integer(i) => Val::Num(i as f64),
            ValueRef::Real(f) => Val::Num(f),
            ValueRef::Text(t) => Val::Str(String::from_utf8_lossy(t).into_owned().into_bytes()),
            ValueRef::Blob(b) => Val::Buffer(b.to_vec()),
        }
    }

    /// `JSON.parse`'d stored JSON given as its re-stringified text (None: null).
    pub fn from_json(text: Option<Vec<u8>>) -> Val {
        text.map_or(Val::Null, Val::Json)
    }

    pub fn text(s: &str) -> Val {
        Val::Str(s.as_bytes().to_vec())
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, Val::Undefined)
    }

    /// `x == null`
    pub fn nullish(&self) -> bool {
        match self {
            Val::Undefined | Val::Null => true,
            Val::Js(v) => v.is_nullish(),
            _ => false,
        }
    }

    /// JS ToBoolean.
    pub fn truthy(&self) -> bool {
        match self {
            Val::Undefined | Val::Null => false,
            Val::Bool(b) => *b,
            Val::Num(n) => !(*n == 0.0 || n.is_nan()),
            Val::Str(s) => !s.is_empty(),
            Val::Buffer(_) => true,
            Val::Json(t) => !matches!(t.as_slice(), b"0" | b"false" | b"\"\"" | b"-0"),
            Val::Js(v) => v.truthy(),
        }
    }

    /// `x === "s"`
    pub fn is_str(&self, s: &str) -> bool {
        matches!(self, Val::Str(t) if t.as_slice() == s.as_bytes())
    }

    /// `Number(x)` (a BigInt converts; a Symbol throws V8's TypeError).
    pub fn number(&self) -> SResult<f64> {
        Ok(match self {
            Val::Undefined => f64::NAN,
            Val::Null => 0.0,
            Val::Bool(b) => f64::from(u8::from(*b)),
            Val::Num(n) => *n,
            Val::Str(s) | Val::Buffer(s) => str_to_number(&String::from_utf8_lossy(s)),
            Val::Json(_) => f64::NAN,
            Val::Js(v) => v.number_of()?,
        })
    }

    /// `a === b`
    pub fn strict_eq(&self, other: &Val) -> SResult<bool> {
        Ok(match (self, other) {
            (Val::Undefined, Val::Undefined) | (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Num(a), Val::Num(b)) => a == b,
            (Val::Str(a), Val::Str(b)) => a == b,
            (Val::Js(a), Val::Js(b)) => V8::of(a).strict_equals(a.raw(), b.raw())?,
            _ => false,
        })
    }

    /// `a <= b` or `a >= b`. Two numbers compare as IEEE doubles, exactly as JS does;
    /// anything else (strings, a BigInt, a caller's object and its `valueOf`) goes to V8.
    pub fn compare(&self, op: Compare, other: &Val, v8: &V8) -> SResult<bool> {
        match (self, other, op) {
            (Val::Num(a), Val::Num(b), Compare::Le) => Ok(a <= b),
            (Val::Num(a), Val::Num(b), Compare::Ge) => Ok(a >= b),
            _ => v8.compare(op, self.to_js(v8)?, other.to_js(v8)?),
        }
    }

    /// `x + 1`: numeric addition, or string concatenation for strings, Buffers and
    /// objects (left to V8 for a caller's value).
    pub fn plus_one(&self) -> SResult<Val> {
        Ok(match self {
            Val::Undefined | Val::Json(_) => Val::Num(f64::NAN),
            Val::Null => Val::Num(1.0),
            Val::Bool(b) => Val::Num(f64::from(u8::from(*b)) + 1.0),
            Val::Num(n) => Val::Num(n + 1.0),
            Val::Str(s) | Val::Buffer(s) => {
                let mut s = String::from_utf8_lossy(s).into_owned().into_bytes();
                s.push(b'1');
                Val::Str(s)
            }
            Val::Js(v) => {
                let v8 = V8::of(v);
                Val::from_js(v8.add(v.raw(), v8.double(1.0)?)?)?
            }
        })
    }

    /// The value bound as better-sqlite3 binds it (numbers as REAL, booleans refused).
    pub fn bound(&self) -> SResult<Bound> {
        Ok(match self {
            Val::Undefined | Val::Null => Bound::Null,
            Val::Num(n) => Bound::num(*n),
            Val::Str(s) | Val::Json(s) => Bound::Text(s.clone()),
            Val::Buffer(b) => Bound::Blob(b.clone()),
            Val::Bool(_) => bound_from_js_bool()?,
            Val::Js(v) => bound_from_js(v)?,
        })
    }

    /// The value as a JS value of this call (for V8's operators).
    pub fn to_js(&self, v8: &V8) -> SResult<sys::napi_value> {
        match self {
            Val::Undefined => v8.undefined(),
            Val::Null => v8.null(),
            Val::Bool(b) => v8.boolean(*b),
            Val::Num(n) => v8.double(*n),
            Val::Str(s) => v8.string_wtf8(s),
            Val::Buffer(b) => v8.buffer(b),
            Val::Json(t) => Ok(v8.parse(&String::from_utf8_lossy(t))?.raw()),
            Val::Js(v) => Ok(v.raw()),
        }
    }

    /// `JSON.stringify(x)` (None when it gives undefined).
    pub fn stringify(&self, v8: &V8) -> SResult<Option<Vec<u8>>> {
        match self {
            Val::Undefined => Ok(None),
            Val::Null => Ok(Some(b"null".to_vec())),
            Val::Json(t) => Ok(Some(t.clone())),
            other => v8.stringify(other.to_js(v8)?),
        }
    }

    /// `String(x)` as WTF-8.
    pub fn to_js_string(&self, v8: &V8) -> SResult<Vec<u8>> {
        match self {
            Val::Str(s) => Ok(s.clone()),
            other => v8.string_of(other.to_js(v8)?),
        }
    }

    /// A value read from a column, as that column value again.
    pub fn as_column(&self) -> ValueRef<'_> {
        match self {
            Val::Num(n) => ValueRef::Real(*n),
            Val::Str(s) => ValueRef::Text(s),
            Val::Buffer(b) => ValueRef::Blob(b),
            _ => ValueRef::Null,
        }
    }

    /// The value in a row written as JSON (values a row cannot hold are null).
    pub fn write_json(&self, out: &mut JsonOut) {
        match self {
            Val::Undefined | Val::Null | Val::Js(_) => out.null(),
            Val::Bool(b) => out.bool(*b),
            Val::Num(n) => out.num(*n),
            Val::Str(t) => out.text_bytes(t),
            Val::Buffer(b) => out.value(ValueRef::Blob(b)),
            Val::Json(t) => out.raw(&String::from_utf8_lossy(t)),
        }
    }
}

/// better-sqlite3 refuses booleans with this TypeError.
fn bound_from_js_bool() -> SResult<Bound> {
    Err(crate::sqlite::error::StoreError::type_error(
        crate::js::bind::CANNOT_BIND,
    ))
}

/// `a ?? b()`
pub fn coalesce(a: Val, b: impl FnOnce() -> Val) -> Val {
    if a.nullish() {
        b()
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_equality_follows_js() -> SResult<()> {
        assert!(Val::Num(1.0).strict_eq(&Val::Num(1.0))?);
        assert!(!Val::text("1").strict_eq(&Val::Num(1.0))?);
        assert!(!Val::Null.strict_eq(&Val::Undefined)?);
        assert!(!Val::Num(f64::NAN).strict_eq(&Val::Num(f64::NAN))?);
        assert!(!Val::Buffer(vec![1]).strict_eq(&Val::Buffer(vec![1]))?);
        Ok(())
    }

    #[test]
    fn plus_one_adds_or_concatenates() -> SResult<()> {
        assert!(matches!(Val::Num(4.0).plus_one()?, Val::Num(n) if n == 5.0));
        assert!(matches!(Val::Null.plus_one()?, Val::Num(n) if n == 1.0));
        assert!(matches!(Val::Undefined.plus_one()?, Val::Num(n) if n.is_nan()));
        assert!(matches!(Val::text("4").plus_one()?, Val::Str(s) if s == b"41"));
        Ok(())
    }

    #[test]
    fn truthiness_and_number_follow_js() -> SResult<()> {
        assert!(!Val::text("").truthy() && Val::text("0").truthy());
        assert!(!Val::Num(f64::NAN).truthy() && !Val::Num(-0.0).truthy());
        assert!(Val::Buffer(Vec::new()).truthy());
        assert!(!Val::Json(b"0".to_vec()).truthy() && Val::Json(b"{}".to_vec()).truthy());
        assert_eq!(Val::text(" 0x10 ").number()?, 16.0);
        assert_eq!(Val::Null.number()?, 0.0);
        assert!(Val::text("inf").number()?.is_nan());
        Ok(())
    }

    #[test]
    fn column_text_reads_like_v8_decodes_it() {
        // A lone surrogate as better-sqlite3 stored it (ED A0 80) reads as U+FFFD marks.
        let v = Val::from_column(ValueRef::Text(b"a\xED\xA0\x80"));
        assert!(matches!(&v, Val::Str(s) if std::str::from_utf8(s).is_ok()));
    }
}
