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
use crate::js::value::JsVal;
use crate::sqlite::error::{SResult, StoreError};

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

fn ok(status: sys::napi_status) -> SResult<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(StoreError::Pending)
    }
}

/// Calls into V8 in one environment.
#[derive(Clone, Copy)]
pub(crate) struct V8 {
    env: sys::napi_env,
}

impl V8 {
    pub fn new(env: &Env) -> V8 {
        V8 { env: env.raw() }
    }

    /// The environment a caller's value belongs to.
    pub fn of(v: &JsVal) -> V8 {
        V8 { env: v.env() }
    }

    fn global_property(&self, name: &CStr) -> SResult<sys::napi_value> {
        let mut global = std::ptr::null_mut();
        let mut out = std::ptr::null_mut();
        // SAFETY: `env` is the live environment of the current native call.
        ok(unsafe { sys::napi_get_global(self.env, &mut global) })?;
        ok(unsafe { sys::napi_get_named_property(self.env, global, name.as_ptr(), &mut out) })?;
        Ok(out)
    }

    fn call(&self, this: sys::napi_value, f: sys::napi_value, args: &[sys::napi_value]) -> SResult<sys::napi_value> {
        let mut out = std::ptr::null_mut();
        // SAFETY: all values belong to this environment's current scope.
        ok(unsafe { sys::napi_call_function(self.env, this, f, args.len(), args.as_ptr(), &mut out) })?;
        Ok(out)
    }

    fn json_call(&self, name: &CStr, arg: sys::napi_value) -> SResult<sys::napi_value> {
        let json = self.global_property(c"JSON")?;
        let mut f = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_get_named_property(self.env, json, name.as_ptr(), &mut f) })?;
        self.call(json, f, &[arg])
    }

    /// A JS string from UTF-8 text.
    pub fn string(&self, s: &str) -> SResult<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        // SAFETY: `s` is valid for `s.len()` bytes.
        ok(unsafe { sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), s.len() as isize, &mut v) })?;
        Ok(v)
    }

    /// A JS string from WTF-8 bytes (a caller's lone surrogates come back as themselves).
    pub fn string_wtf8(&self, bytes: &[u8]) -> SResult<sys::napi_value> {
        let units = crate::js::value::utf16_from_wtf8(bytes);
        let mut v = std::ptr::null_mut();
        // SAFETY: `units` is valid for its length.
        ok(unsafe { sys::napi_create_string_utf16(self.env, units.as_ptr(), units.len() as isize, &mut v) })?;
        Ok(v)
    }

    pub fn double(&self, n: f64) -> SResult<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_create_double(self.env, n, &mut v) })?;
        Ok(v)
    }

    pub fn undefined(&self) -> SResult<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_get_undefined(self.env, &mut v) })?;
        Ok(v)
    }

    pub fn boolean(&self, b: bool) -> SResult<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_get_boolean(self.env, b, &mut v) })?;
        Ok(v)
    }

    pub fn null(&self) -> SResult<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_get_null(self.env, &mut v) })?;
        Ok(v)
    }

    /// A Buffer holding a copy of `bytes` (what better-sqlite3 returns for a BLOB).
    pub fn buffer(&self, bytes: &[u8]) -> SResult<sys::napi_value> {
        let mut data = std::ptr::null_mut();
        let mut v = std::ptr::null_mut();
        let ptr = if bytes.is_empty() { c"".as_ptr().cast() } else { bytes.as_ptr().cast() };
        // SAFETY: V8 copies `bytes.len()` bytes from `ptr`.
        ok(unsafe { sys::napi_create_buffer_copy(self.env, bytes.len(), ptr, &mut data, &mut v) })?;
        Ok(v)
    }

    /// `JSON.stringify(v)` as WTF-8 text; None when the result is undefined.
    pub fn stringify(&self, v: sys::napi_value) -> SResult<Option<Vec<u8>>> {
        let out = JsVal::from_raw(self.env, self.json_call(c"stringify", v)?)?;
        if out.is_string() {
            Ok(Some(out.wtf8()?))
        } else {
            Ok(None)
        }
    }

    /// `JSON.parse(text)` (text already known to be valid JSON).
    pub fn parse(&self, text: &str) -> SResult<JsVal> {
        JsVal::from_raw(self.env, self.json_call(c"parse", self.string(text)?)?)
    }

    /// `JSON.stringify(parseJson(stored, fallback))`, None meaning the parsed value is
    /// null. `fallback` is the JSON text of the fallback value.
    pub fn reparse(&self, stored: ValueRef<'_>, fallback: &str) -> SResult<Option<Vec<u8>>> {
        let fb = || if fallback == "null" { None } else { Some(fallback.as_bytes().to_vec()) };
        let text = match stored {
            ValueRef::Null => return Ok(fb()),
            ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Integer(i) => return self.stringify(self.double(i as f64)?),
            ValueRef::Real(f) => {
                return if f.is_finite() { self.stringify(self.double(f)?) } else { Ok(fb()) };
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

    /// `String(x)` as WTF-8: V8's own, so a Symbol gives "Symbol(desc)" and objects go
    /// through their `toString`/`valueOf`.
    pub fn string_of(&self, x: sys::napi_value) -> SResult<Vec<u8>> {
        let string_fn = self.global_property(c"String")?;
        let global = self.global_property(c"globalThis")?;
        JsVal::from_raw(self.env, self.call(global, string_fn, &[x])?)?.wtf8()
    }

    /// `a <= b` or `a >= b`, evaluated by V8 (abstract relational comparison).
    pub fn compare(&self, op: Compare, a: sys::napi_value, b: sys::napi_value) -> SResult<bool> {
        let name = match op {
            Compare::Le => c"le",
            Compare::Ge => c"ge",
        };
        Ok(self.operator(name, a, b)?.is_true())
    }

    /// `a + b`, evaluated by V8 (ToPrimitive, concatenation, BigInt rules).
    pub fn add(&self, a: sys::napi_value, b: sys::napi_value) -> SResult<JsVal> {
        self.operator(c"add", a, b)
    }

    fn operator(&self, name: &CStr, a: sys::napi_value, b: sys::napi_value) -> SResult<JsVal> {
        let ops = self.operators()?;
        let mut f = std::ptr::null_mut();
        // SAFETY: as above.
        ok(unsafe { sys::napi_get_named_property(self.env, ops, name.as_ptr(), &mut f) })?;
        JsVal::from_raw(self.env, self.call(ops, f, &[a, b])?)
    }

    /// `a === b`
    pub fn strict_equals(&self, a: sys::napi_value, b: sys::napi_value) -> SResult<bool> {
        let mut same = false;
        // SAFETY: as above.
        ok(unsafe { sys::napi_strict_equals(self.env, a, b, &mut same) })?;
        Ok(same)
    }

    /// The operator functions, compiled on first use and kept by a reference.
    fn operators(&self) -> SResult<sys::napi_value> {
        let existing = OPERATORS_REF.with(|c| c.get());
        let mut out = std::ptr::null_mut();
        if !existing.is_null() {
            // SAFETY: the reference was created below in this thread and never deleted.
            ok(unsafe { sys::napi_get_reference_value(self.env, existing, &mut out) })?;
            if !out.is_null() {
                return Ok(out);
            }
        }
        let source = self.string(OPERATORS)?;
        // SAFETY: `source` is a JS string of this environment.
        ok(unsafe { sys::napi_run_script(self.env, source, &mut out) })?;
        let mut reference = std::ptr::null_mut();
        // SAFETY: `out` is live; the strong reference keeps it for the thread's life.
        ok(unsafe { sys::napi_create_reference(self.env, out, 1, &mut reference) })?;
        OPERATORS_REF.with(|c| c.set(reference));
        Ok(out)
    }
}
