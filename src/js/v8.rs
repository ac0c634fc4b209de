//! V8 itself, for what the original left to JavaScript: `JSON.stringify` of caller
//! values, `JSON.parse` of stored JSON, `String(x)`, and the comparison operators. Calling
//! V8 gives its exact results, errors and side effects (getters, `toJSON`, `valueOf`),
//! where a re-implementation would drift.

use std::cell::Cell;
use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi::sys;
use rusqlite::types::ValueRef;

use crate::js::json_in::is_valid_json;
use crate::js::napi::{Napi, Raw};
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;

thread_local! {
    /// The compiled operator functions (see [`OPERATORS`]), kept for the thread's life.
    static OPERATORS_REF: Cell<sys::napi_ref> = const { Cell::new(std::ptr::null_mut()) };
}

/// JS source of the operators that Node-API does not expose.
const OPERATORS: &str = "({ le: (a, b) => a <= b, ge: (a, b) => a >= b, add: (a, b) => a + b })";

/// A comparison evaluated by V8.
#[derive(Clone, Copy)]
pub enum Compare {
    /// `a <= b`
    Le,
    /// `a >= b`
    Ge,
}

/// Calls into V8 in one environment.
#[derive(Clone, Copy)]
pub(crate) struct V8 {
    napi: Napi,
}

impl V8 {
    pub fn new(env: &Env) -> V8 {
        V8 {
            napi: Napi::new(env.raw()),
        }
    }

    /// The environment a caller's value belongs to.
    pub fn of(v: &JsVal) -> V8 {
        V8 { napi: v.napi() }
    }

    fn json_call(&self, name: &CStr, arg: Raw) -> SResult<Raw> {
        let json = self.napi.named_property(self.napi.global()?, c"JSON")?;
        let f = self.napi.named_property(json, name)?;
        self.napi.call(json, f, &[arg])
    }

    /// A JS string from UTF-8 text.
    pub fn string(&self, s: &str) -> SResult<Raw> {
        self.napi.string_utf8(s.as_bytes())
    }

    /// A JS string from WTF-8 bytes (a caller's lone surrogates come back as themselves).
    pub fn string_wtf8(&self, bytes: &[u8]) -> SResult<Raw> {
        self.napi.string_utf16(&crate::js::value::utf16_from_wtf8(bytes))
    }

    pub fn double(&self, n: f64) -> SResult<Raw> {
        self.napi.number(n)
    }

    pub fn undefined(&self) -> SResult<Raw> {
        self.napi.undefined()
    }

    pub fn boolean(&self, b: bool) -> SResult<Raw> {
        self.napi.bool_value(b)
    }

    pub fn null(&self) -> SResult<Raw> {
        self.napi.null()
    }

    /// A Buffer holding a copy of `bytes` (what better-sqlite3 returns for a BLOB).
    pub fn buffer(&self, bytes: &[u8]) -> SResult<Raw> {
        self.napi.buffer_copy(bytes)
    }

    /// `JSON.stringify(v)` as WTF-8 text; None when the result is undefined.
    pub fn stringify(&self, v: Raw) -> SResult<Option<Vec<u8>>> {
        let out = JsVal::wrap(self.napi, self.json_call(c"stringify", v)?)?;
        if out.is_string() {
            Ok(Some(out.wtf8()?))
        } else {
            Ok(None)
        }
    }

    /// `JSON.parse(text)` (text already known to be valid JSON).
    pub fn parse(&self, text: &str) -> SResult<JsVal> {
        JsVal::wrap(self.napi, self.json_call(c"parse", self.string(text)?)?)
    }

    /// `JSON.stringify(parseJson(stored, fallback))`, None meaning the parsed value is
    /// null. `fallback` is the JSON text of the fallback value.
    pub fn reparse(&self, stored: ValueRef<'_>, fallback: &str) -> SResult<Option<Vec<u8>>> {
        let fb = || {
            if fallback == "null" {
                None
            } else {
                Some(fallback.as_bytes().to_vec())
            }
        };
        let text = match stored {
            ValueRef::Null => return Ok(fb()),
            ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Integer(i) => return self.stringify(self.double(i as f64)?),
            ValueRef::Real(f) => {
                return if f.is_finite() {
                    self.stringify(self.double(f)?)
                } else {
                    Ok(fb())
                };
            }
        };
        if !is_valid_json(&text) {
            return Ok(fb());
        }
        let parsed = self.parse(&text)?;
        if parsed.is_null() {
            return Ok(None);
        }
        self.stringify(parsed.raw())
    }

    /// `String(x)` of a caller's value (a string is itself; see [`V8::string_of`]).
    pub fn string_of_js(&self, x: &JsVal) -> SResult<Vec<u8>> {
        if x.is_string() {
            x.wtf8()
        } else {
            self.string_of(x.raw())
        }
    }

    /// `String(x)` as WTF-8: V8's own, so a Symbol gives "Symbol(desc)" and objects go
    /// through their `toString`/`valueOf`.
    pub fn string_of(&self, x: Raw) -> SResult<Vec<u8>> {
        let global = self.napi.global()?;
        let string_fn = self.napi.named_property(global, c"String")?;
        JsVal::wrap(self.napi, self.napi.call(global, string_fn, &[x])?)?.wtf8()
    }

    /// `a <= b` or `a >= b`, evaluated by V8 (abstract relational comparison).
    pub fn compare(&self, op: Compare, a: Raw, b: Raw) -> SResult<bool> {
        let name = match op {
            Compare::Le => c"le",
            Compare::Ge => c"ge",
        };
        Ok(self.operator(name, a, b)?.is_true())
    }

    /// `a + b`, evaluated by V8 (ToPrimitive, concatenation, BigInt rules).
    pub fn add(&self, a: Raw, b: Raw) -> SResult<JsVal> {
        self.operator(c"add", a, b)
    }

    fn operator(&self, name: &CStr, a: Raw, b: Raw) -> SResult<JsVal> {
        let ops = self.operators()?;
        let f = self.napi.named_property(ops, name)?;
        JsVal::wrap(self.napi, self.napi.call(ops, f, &[a, b])?)
    }

    /// `a === b`
    pub fn strict_equals(&self, a: Raw, b: Raw) -> SResult<bool> {
        self.napi.strict_equals(a, b)
    }

    /// The operator functions, compiled on first use and kept by a reference.
    fn operators(&self) -> SResult<Raw> {
        let existing = OPERATORS_REF.with(|c| c.get());
        if !existing.is_null() {
            let ops = self.napi.reference_value(existing)?;
            if !ops.is_null() {
                return Ok(ops);
            }
        }
        let ops = self.napi.run_script(self.string(OPERATORS)?)?;
        let reference = self.napi.reference(ops)?;
        OPERATORS_REF.with(|c| c.set(reference));
        Ok(ops)
    }
}
