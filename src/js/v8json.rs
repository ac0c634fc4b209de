//! V8's own JSON.parse / JSON.stringify, called from Rust where the original
//! stringified caller values or re-stringified stored JSON, so the text is exactly
//! what the original wrote.

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi::sys;
use rusqlite::types::ValueRef;

use crate::sqlite::error::{SResult, StoreError};
use crate::js::value::JsVal;
use crate::js::json_out::is_valid_json;

/// Calls into V8's own JSON for the values the original stringified.
pub(crate) struct Js {
    env: sys::napi_env,
}

impl Js {
    pub fn new(env: &Env) -> Js {
        Js { env: env.raw() }
    }

    fn json_fn(&self, name: &CStr) -> SResult<(sys::napi_value, sys::napi_value)> {
        let mut global = std::ptr::null_mut();
        let mut json = std::ptr::null_mut();
        let mut f = std::ptr::null_mut();
        unsafe {
            if sys::napi_get_global(self.env, &mut global) != sys::Status::napi_ok
                || sys::napi_get_named_property(self.env, global, c"JSON".as_ptr(), &mut json) != sys::Status::napi_ok
                || sys::napi_get_named_property(self.env, json, name.as_ptr(), &mut f) != sys::Status::napi_ok
            {
                return Err(StoreError::Pending);
            }
        }
        Ok((json, f))
    }

    fn call(&self, name: &CStr, arg: sys::napi_value) -> SResult<sys::napi_value> {
        let (this, f) = self.json_fn(name)?;
        let mut out = std::ptr::null_mut();
        let args = [arg];
        if unsafe { sys::napi_call_function(self.env, this, f, 1, args.as_ptr(), &mut out) } != sys::Status::napi_ok {
            return Err(StoreError::Pending);
        }
        Ok(out)
    }

    pub fn string(&self, s: &str) -> sys::napi_value {
        let mut v = std::ptr::null_mut();
        unsafe { sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), s.len() as isize, &mut v) };
        v
    }

    pub fn double(&self, n: f64) -> sys::napi_value {
        let mut v = std::ptr::null_mut();
        unsafe { sys::napi_create_double(self.env, n, &mut v) };
        v
    }

    /// `JSON.stringify(v)`: None when the result is undefined.
    pub fn stringify(&self, v: sys::napi_value) -> SResult<Option<Vec<u8>>> {
        let out = JsVal::from_raw(self.env, self.call(c"stringify", v)?)?;
        if out.is_string() {
            Ok(Some(out.wtf8()?))
        } else {
            Ok(None)
        }
    }

    /// `JSON.stringify(parseJson(stored, fallback))`, None meaning the parsed value is
    /// null. `fallback` is the JSON text of the fallback value.
    pub fn reparse(&self, stored: ValueRef<'_>, fallback: &str) -> SResult<Option<Vec<u8>>> {
        let fb = || if fallback == "null" { None } else { Some(fallback.as_bytes().to_vec()) };
        let text = match stored {
            ValueRef::Null => return Ok(fb()),
            ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Integer(i) => return self.stringify(self.double(i as f64)),
            ValueRef::Real(f) => {
                return if f.is_finite() { self.stringify(self.double(f)) } else { Ok(fb()) };
            }
        };
        if !is_valid_json(&text) {
            return Ok(fb());
        }
        let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
        if trimmed == "null" {
            return Ok(None);
        }
        if is_canonical_json(trimmed) {
            return Ok(Some(trimmed.as_bytes().to_vec()));
        }
        let parsed = self.call(c"parse", self.string(&text))?;
        let pv = JsVal::from_raw(self.env, parsed)?;
        if pv.is_null() {
            return Ok(None);
        }
        self.stringify(parsed)
    }
}

/// Whether `JSON.stringify(JSON.parse(s)) === s` certainly holds for valid JSON `s`
/// (conservative: anything unusual goes through V8).
pub(crate) fn is_canonical_json(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    // Stack of objects' key lists (None for arrays).
    let mut stack: Vec<Option<Vec<&[u8]>>> = Vec::new();
    let mut expect_key = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' => {
                stack.push(Some(Vec::new()));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(None);
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                expect_key = matches!(stack.last(), Some(Some(_)));
                i += 1;
            }
            b':' => i += 1,
            b'"' => {
                let start = i + 1;
                i += 1;
                while b[i] != b'"' {
                    if b[i] == b'\\' {
                        match b[i + 1] {
                            b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => i += 2,
                            b'u' => {
                                // JSON.stringify writes \u00XX only for other control chars.
                                let hex = &s[i + 2..i + 6];
                                let v = u32::from_str_radix(hex, 16).unwrap_or(0xFFFF);
                                if v >= 0x20 || matches!(v, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) || hex.bytes().any(|h| h.is_ascii_uppercase()) {
                                    return false;
                                }
                                i += 6;
                            }
                            _ => return false,
                        }
                    } else {
                        i += 1;
                    }
                }
                let text = &b[start..i];
                i += 1;
                if expect_key {
                    // Integer-like keys are reordered by V8; duplicates collapse.
                    if text.first().is_some_and(|d| d.is_ascii_digit()) {
                        return false;
                    }
                    if let Some(Some(keys)) = stack.last_mut() {
                        if keys.contains(&text) {
                            return false;
                        }
                        keys.push(text);
                    }
                    expect_key = false;
                }
            }
            b't' => i += 4,
            b'f' => i += 5,
            b'n' => i += 4,
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                if !canonical_number(&s[start..i]) {
                    return false;
                }
            }
            _ => return false, // whitespace outside strings
        }
    }
    true
}


/// A JSON number token that JSON.stringify would write back unchanged.
fn canonical_number(t: &str) -> bool {
    if t == "-0" || t.contains(['e', 'E']) {
        return false;
    }
    let digits = t.trim_start_matches('-');
    if !t.contains('.') {
        return digits.len() <= 15 && (digits == "0" || !digits.starts_with('0'));
    }
    let Ok(v) = t.parse::<f64>() else { return false };
    if v.fract() == 0.0 || v.abs() < 1e-6 || v.abs() >= 1e21 {
        return false;
    }
    let mut buf = ryu::Buffer::new();
    let out = buf.format_finite(v);
    out == t && !out.contains('e')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_detection() {
        for ok in ["{}", "{\"x\":1}", "[1,2.5,\"a\\n\"]", "{\"a\":{\"b\":[true,false,null]}}", "583.723", "\"\\u0001\""] {
            assert!(is_canonical_json(ok), "{ok}");
        }
        for bad in ["{ }", "{\"a\":1,\"a\":2}", "{\"1\":1}", "1e21", "1.0", "\"\\u0041\"", "\"\\/\"", "-0", "1.50"] {
            assert!(!is_canonical_json(bad), "{bad}");
        }
    }
}
