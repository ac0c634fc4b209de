//! A borrowed JS value with the JavaScript semantics the original store relied on:
//! `== null`, truthiness, `Number(x)`, `Object.hasOwn`, property reads, and the exact
//! UTF-16 content of strings (lone surrogates included, as WTF-8 bytes like V8 writes).

use std::ffi::CStr;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi::ValueType;

use crate::errors::{SResult, StoreError};

#[derive(Clone, Copy)]
pub struct JsVal {
    env: sys::napi_env,
    raw: sys::napi_value,
    ty: sys::napi_valuetype,
}

macro_rules! ok {
    ($call:expr) => {
        if unsafe { $call } != sys::Status::napi_ok {
            return Err(StoreError::Pending);
        }
    };
}

impl FromNapiValue for JsVal {
    unsafe fn from_napi_value(env: sys::napi_env, raw: sys::napi_value) -> napi::Result<Self> {
        let mut ty = 0;
        sys::napi_typeof(env, raw, &mut ty);
        Ok(JsVal { env, raw, ty })
    }
}

impl TypeName for JsVal {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for JsVal {}

impl JsVal {
    pub fn from_raw(env: sys::napi_env, raw: sys::napi_value) -> Self {
        let mut ty = 0;
        unsafe { sys::napi_typeof(env, raw, &mut ty) };
        JsVal { env, raw, ty }
    }

    pub fn raw(&self) -> sys::napi_value {
        self.raw
    }

    pub fn env(&self) -> sys::napi_env {
        self.env
    }

    pub fn is_undefined(&self) -> bool {
        self.ty == sys::ValueType::napi_undefined
    }
    pub fn is_null(&self) -> bool {
        self.ty == sys::ValueType::napi_null
    }
    /// `x == null`
    pub fn is_nullish(&self) -> bool {
        self.is_undefined() || self.is_null()
    }
    pub fn is_number(&self) -> bool {
        self.ty == sys::ValueType::napi_number
    }
    pub fn is_string(&self) -> bool {
        self.ty == sys::ValueType::napi_string
    }
    pub fn is_bool(&self) -> bool {
        self.ty == sys::ValueType::napi_boolean
    }
    pub fn is_bigint(&self) -> bool {
        self.ty == sys::ValueType::napi_bigint
    }
    pub fn is_function(&self) -> bool {
        self.ty == sys::ValueType::napi_function
    }
    /// typeof x === "object" && x !== null (functions excluded)
    pub fn is_object(&self) -> bool {
        self.ty == sys::ValueType::napi_object
    }

    pub fn number(&self) -> Option<f64> {
        if !self.is_number() {
            return None;
        }
        let mut v = 0f64;
        unsafe { sys::napi_get_value_double(self.env, self.raw, &mut v) };
        Some(v)
    }

    pub fn bool_value(&self) -> Option<bool> {
        if !self.is_bool() {
            return None;
        }
        let mut v = false;
        unsafe { sys::napi_get_value_bool(self.env, self.raw, &mut v) };
        Some(v)
    }

    /// `x === true`
    pub fn is_true(&self) -> bool {
        self.bool_value() == Some(true)
    }

    /// JS ToBoolean.
    pub fn truthy(&self) -> bool {
        match self.ty {
            sys::ValueType::napi_undefined | sys::ValueType::napi_null => false,
            sys::ValueType::napi_boolean => self.bool_value().unwrap_or(false),
            sys::ValueType::napi_number => {
                let n = self.number().unwrap_or(0.0);
                !(n == 0.0 || n.is_nan())
            }
            sys::ValueType::napi_string => self.utf16_len() > 0,
            sys::ValueType::napi_bigint => {
                // 0n is the only falsy BigInt; a lossy read of a huge value is never 0.
                let (v, lossless) = self.bigint_i64();
                !(v == 0 && lossless)
            }
            _ => true,
        }
    }

    /// `Number(x)`: exact JS semantics through V8 (throws for BigInt and Symbol).
    pub fn to_number(self) -> SResult<f64> {
        if let Some(n) = self.number() {
            return Ok(n);
        }
        match self.ty {
            sys::ValueType::napi_undefined => return Ok(f64::NAN),
            sys::ValueType::napi_null => return Ok(0.0),
            sys::ValueType::napi_boolean => return Ok(if self.is_true() { 1.0 } else { 0.0 }),
            sys::ValueType::napi_bigint => {
                return Err(StoreError::type_error("Cannot convert a BigInt value to a number"))
            }
            _ => {}
        }
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_coerce_to_number(self.env, self.raw, &mut out));
        let mut v = 0f64;
        ok!(sys::napi_get_value_double(self.env, out, &mut v));
        Ok(v)
    }

    /// `String(x)` for the values the store coerces (strings, numbers, objects).
    pub fn to_js_string(self) -> SResult<Vec<u8>> {
        if self.is_string() {
            return Ok(self.wtf8());
        }
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_coerce_to_string(self.env, self.raw, &mut out));
        Ok(JsVal::from_raw(self.env, out).wtf8())
    }

    pub fn utf16_len(&self) -> usize {
        let mut len = 0usize;
        unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, std::ptr::null_mut(), 0, &mut len) };
        len
    }

    /// The string's UTF-16 units.
    pub fn utf16(&self) -> Vec<u16> {
        let len = self.utf16_len();
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
        unsafe {
            sys::napi_get_value_string_utf16(self.env, self.raw, buf.as_mut_ptr(), len + 1, &mut written)
        };
        buf.truncate(written);
        buf
    }

    /// The string as WTF-8: UTF-8, except that a lone surrogate is written as its own
    /// three-byte sequence (what better-sqlite3 stores for such strings).
    pub fn wtf8(&self) -> Vec<u8> {
        // Fast path: napi's UTF-8 read is exact unless it had to replace a lone
        // surrogate with U+FFFD; only then re-read as UTF-16 and encode each unit.
        let mut len = 0usize;
        unsafe { sys::napi_get_value_string_utf8(self.env, self.raw, std::ptr::null_mut(), 0, &mut len) };
        let mut buf: Vec<u8> = Vec::with_capacity(len + 1);
        let mut written = 0usize;
        unsafe {
            sys::napi_get_value_string_utf8(self.env, self.raw, buf.as_mut_ptr().cast(), len + 1, &mut written);
            buf.set_len(written);
        }
        if !buf.windows(3).any(|w| w == [0xEF, 0xBF, 0xBD]) {
            return buf;
        }
        wtf8_from_utf16(&self.utf16())
    }

    /// A string value as Rust text (lone surrogates replaced); None for other types.
    pub fn string_lossy(&self) -> Option<String> {
        if !self.is_string() {
            return None;
        }
        Some(String::from_utf16_lossy(&self.utf16()))
    }

    pub fn bigint_i64(&self) -> (i64, bool) {
        let mut v = 0i64;
        let mut lossless = false;
        unsafe { sys::napi_get_value_bigint_int64(self.env, self.raw, &mut v, &mut lossless) };
        (v, lossless)
    }

    pub fn is_array(&self) -> bool {
        if !self.is_object() {
            return false;
        }
        let mut r = false;
        unsafe { sys::napi_is_array(self.env, self.raw, &mut r) };
        r
    }

    /// Buffer, any typed array or DataView (what better-sqlite3 binds as a BLOB).
    pub fn is_buffer(&self) -> bool {
        if !self.is_object() {
            return false;
        }
        let mut r = false;
        unsafe { sys::napi_is_buffer(self.env, self.raw, &mut r) };
        if r {
            return true;
        }
        unsafe { sys::napi_is_typedarray(self.env, self.raw, &mut r) };
        if r {
            return true;
        }
        unsafe { sys::napi_is_dataview(self.env, self.raw, &mut r) };
        r
    }

    pub fn buffer_bytes(&self) -> Vec<u8> {
        let mut is_typed = false;
        unsafe { sys::napi_is_typedarray(self.env, self.raw, &mut is_typed) };
        if is_typed {
            let mut ty = 0;
            let mut length = 0usize;
            let mut data = std::ptr::null_mut();
            let mut arraybuffer = std::ptr::null_mut();
            let mut offset = 0usize;
            unsafe {
                sys::napi_get_typedarray_info(
                    self.env, self.raw, &mut ty, &mut length, &mut data, &mut arraybuffer, &mut offset,
                )
            };
            let elem = typed_array_element_size(ty);
            if data.is_null() {
                return Vec::new();
            }
            return unsafe { std::slice::from_raw_parts(data as *const u8, length * elem) }.to_vec();
        }
        let mut is_view = false;
        unsafe { sys::napi_is_dataview(self.env, self.raw, &mut is_view) };
        if is_view {
            let mut length = 0usize;
            let mut data = std::ptr::null_mut();
            let mut arraybuffer = std::ptr::null_mut();
            let mut offset = 0usize;
            unsafe {
                sys::napi_get_dataview_info(self.env, self.raw, &mut length, &mut data, &mut arraybuffer, &mut offset)
            };
            if data.is_null() {
                return Vec::new();
            }
            return unsafe { std::slice::from_raw_parts(data as *const u8, length) }.to_vec();
        }
        let mut data = std::ptr::null_mut();
        let mut length = 0usize;
        unsafe { sys::napi_get_buffer_info(self.env, self.raw, &mut data, &mut length) };
        if data.is_null() {
            return Vec::new();
        }
        unsafe { std::slice::from_raw_parts(data as *const u8, length) }.to_vec()
    }

    /// better-sqlite3's "plain object": an object whose prototype is Object.prototype or null.
    pub fn is_plain_object(&self) -> bool {
        if !self.is_object() || self.is_array() || self.is_buffer() {
            return false;
        }
        unsafe {
            let mut proto = std::ptr::null_mut();
            if sys::napi_get_prototype(self.env, self.raw, &mut proto) != sys::Status::napi_ok {
                return false;
            }
            let mut proto_ty = 0;
            sys::napi_typeof(self.env, proto, &mut proto_ty);
            if proto_ty == sys::ValueType::napi_null {
                return true;
            }
            let mut global = std::ptr::null_mut();
            sys::napi_get_global(self.env, &mut global);
            let mut object_ctor = std::ptr::null_mut();
            sys::napi_get_named_property(self.env, global, c"Object".as_ptr(), &mut object_ctor);
            let mut object_proto = std::ptr::null_mut();
            sys::napi_get_named_property(self.env, object_ctor, c"prototype".as_ptr(), &mut object_proto);
            let mut same = false;
            sys::napi_strict_equals(self.env, proto, object_proto, &mut same);
            same
        }
    }

    pub fn undefined(env: sys::napi_env) -> JsVal {
        let mut raw = std::ptr::null_mut();
        unsafe { sys::napi_get_undefined(env, &mut raw) };
        JsVal { env, raw, ty: sys::ValueType::napi_undefined }
    }

    /// `x.key`, with V8's TypeError on null/undefined receivers.
    pub fn get(&self, key: &CStr) -> SResult<JsVal> {
        match self.ty {
            sys::ValueType::napi_object | sys::ValueType::napi_function => {
                let mut out = std::ptr::null_mut();
                ok!(sys::napi_get_named_property(self.env, self.raw, key.as_ptr(), &mut out));
                Ok(JsVal::from_raw(self.env, out))
            }
            sys::ValueType::napi_undefined | sys::ValueType::napi_null => Err(StoreError::type_error(format!(
                "Cannot read properties of {} (reading '{}')",
                if self.is_null() { "null" } else { "undefined" },
                key.to_string_lossy()
            ))),
            // Primitives: none of the store's field names live on their prototypes.
            _ => Ok(JsVal::undefined(self.env)),
        }
    }

    /// `Object.hasOwn(x, key)`.
    pub fn has_own(&self, key: &CStr) -> SResult<bool> {
        match self.ty {
            sys::ValueType::napi_object | sys::ValueType::napi_function => {
                let mut k = std::ptr::null_mut();
                let bytes = key.to_bytes();
                ok!(sys::napi_create_string_utf8(self.env, bytes.as_ptr().cast(), bytes.len() as isize, &mut k));
                let mut r = false;
                ok!(sys::napi_has_own_property(self.env, self.raw, k, &mut r));
                Ok(r)
            }
            sys::ValueType::napi_undefined | sys::ValueType::napi_null => {
                Err(StoreError::type_error("Cannot convert undefined or null to object"))
            }
            _ => Ok(false),
        }
    }

    pub fn array_len(&self) -> u32 {
        let mut len = 0u32;
        unsafe { sys::napi_get_array_length(self.env, self.raw, &mut len) };
        len
    }

    pub fn element(&self, index: u32) -> SResult<JsVal> {
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_get_element(self.env, self.raw, index, &mut out));
        Ok(JsVal::from_raw(self.env, out))
    }

    /// Own enumerable string keys, in JS order (`Object.keys`).
    pub fn keys(&self) -> SResult<Vec<JsVal>> {
        let mut arr = std::ptr::null_mut();
        ok!(sys::napi_get_property_names(self.env, self.raw, &mut arr));
        let arr = JsVal::from_raw(self.env, arr);
        (0..arr.array_len()).map(|i| arr.element(i)).collect()
    }

    /// `x[key]` for a key given as a JS value.
    pub fn get_by(&self, key: &JsVal) -> SResult<JsVal> {
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_get_property(self.env, self.raw, key.raw, &mut out));
        Ok(JsVal::from_raw(self.env, out))
    }
}

fn typed_array_element_size(ty: sys::napi_typedarray_type) -> usize {
    match ty {
        sys::TypedarrayType::int8_array | sys::TypedarrayType::uint8_array | sys::TypedarrayType::uint8_clamped_array => 1,
        sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array => 2,
        sys::TypedarrayType::int32_array | sys::TypedarrayType::uint32_array | sys::TypedarrayType::float32_array => 4,
        _ => 8,
    }
}

/// Encodes UTF-16 units as WTF-8 (surrogate pairs become 4-byte UTF-8; lone surrogates
/// their own 3-byte form).
pub fn wtf8_from_utf16(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len() + units.len() / 2);
    let mut i = 0;
    while i < units.len() {
        let u = units[i] as u32;
        if u < 0x80 {
            out.push(u as u8);
            i += 1;
            continue;
        }
        let cp = if (0xD800..0xDC00).contains(&u) && i + 1 < units.len() && (0xDC00..0xE000).contains(&(units[i + 1] as u32)) {
            let lo = units[i + 1] as u32;
            i += 2;
            0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            i += 1;
            u
        };
        if cp < 0x800 {
            out.push(0xC0 | (cp >> 6) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        } else if cp < 0x10000 {
            out.push(0xE0 | (cp >> 12) as u8);
            out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        } else {
            out.push(0xF0 | (cp >> 18) as u8);
            out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
            out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wtf8_from_utf16;

    #[test]
    fn wtf8_matches_utf8_for_valid_text() {
        let s = "aé漢😀";
        let units: Vec<u16> = s.encode_utf16().collect();
        assert_eq!(wtf8_from_utf16(&units), s.as_bytes());
    }

    #[test]
    fn wtf8_keeps_a_lone_surrogate_as_three_bytes() {
        assert_eq!(wtf8_from_utf16(&[0x61, 0xD800, 0x62]), vec![0x61, 0xED, 0xA0, 0x80, 0x62]);
        assert_eq!(wtf8_from_utf16(&[0xDC00]), vec![0xED, 0xB0, 0x80]);
    }
}
