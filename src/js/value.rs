//! A borrowed JS value with the JavaScript semantics the original store relied on:
//! `== null`, truthiness, `Number(x)`, `Object.hasOwn`, property reads, and the exact
//! UTF-16 content of strings (lone surrogates included, as WTF-8 bytes like V8 writes).

use std::ffi::CStr;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi::ValueType;

use crate::sqlite::error::{SResult, StoreError};

#[derive(Clone, Copy)]
pub struct JsVal {
    env: sys::napi_env,
    raw: sys::napi_value,
    ty: sys::napi_valuetype,
    /// The primitive payload, read (status checked) when the value is wrapped, so that
    /// type tests, truthiness and numbers need no further Node-API call.
    prim: Prim,
}

#[derive(Clone, Copy)]
enum Prim {
    Other,
    Number(f64),
    Bool(bool),
    Str { empty: bool },
    BigInt { value: i64, lossless: bool },
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
        JsVal::from_raw(env, raw).map_err(|_| napi::Error::new(napi::Status::InvalidArg, "unreadable JS value"))
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
    pub fn from_raw(env: sys::napi_env, raw: sys::napi_value) -> SResult<Self> {
        let mut ty = 0;
        ok!(sys::napi_typeof(env, raw, &mut ty));
        let prim = match ty {
            sys::ValueType::napi_number => {
                let mut v = 0f64;
                ok!(sys::napi_get_value_double(env, raw, &mut v));
                Prim::Number(v)
            }
            sys::ValueType::napi_boolean => {
                let mut v = false;
                ok!(sys::napi_get_value_bool(env, raw, &mut v));
                Prim::Bool(v)
            }
            sys::ValueType::napi_string => {
                let mut len = 0usize;
                ok!(sys::napi_get_value_string_utf16(env, raw, std::ptr::null_mut(), 0, &mut len));
                Prim::Str { empty: len == 0 }
            }
            sys::ValueType::napi_bigint => {
                let (mut value, mut lossless) = (0i64, false);
                ok!(sys::napi_get_value_bigint_int64(env, raw, &mut value, &mut lossless));
                Prim::BigInt { value, lossless }
            }
            _ => Prim::Other,
        };
        Ok(JsVal { env, raw, ty, prim })
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
    pub fn is_symbol(&self) -> bool {
        self.ty == sys::ValueType::napi_symbol
    }
    pub fn is_function(&self) -> bool {
        self.ty == sys::ValueType::napi_function
    }
    /// typeof x === "object" && x !== null (functions excluded)
    pub fn is_object(&self) -> bool {
        self.ty == sys::ValueType::napi_object
    }

    pub fn number(&self) -> Option<f64> {
        match self.prim {
            Prim::Number(v) => Some(v),
            _ => None,
        }
    }

    pub fn bool_value(&self) -> Option<bool> {
        match self.prim {
            Prim::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// `x === true`
    pub fn is_true(&self) -> bool {
        self.bool_value() == Some(true)
    }

    /// JS ToBoolean.
    pub fn truthy(&self) -> bool {
        match (self.ty, self.prim) {
            (sys::ValueType::napi_undefined | sys::ValueType::napi_null, _) => false,
            (_, Prim::Bool(v)) => v,
            (_, Prim::Number(n)) => !(n == 0.0 || n.is_nan()),
            (_, Prim::Str { empty }) => !empty,
            // 0n is the only falsy BigInt; a lossy read of a huge value is never 0.
            (_, Prim::BigInt { value, lossless }) => !(value == 0 && lossless),
            _ => true,
        }
    }

    /// A BigInt's value as i64 and whether that is exact; None for other types.
    pub fn bigint_i64(&self) -> Option<(i64, bool)> {
        match self.prim {
            Prim::BigInt { value, lossless } => Some((value, lossless)),
            _ => None,
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
            return self.wtf8();
        }
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_coerce_to_string(self.env, self.raw, &mut out));
        JsVal::from_raw(self.env, out)?.wtf8()
    }

    /// The string's UTF-16 units.
    pub fn utf16(&self) -> SResult<Vec<u16>> {
        let mut len = 0usize;
        ok!(sys::napi_get_value_string_utf16(self.env, self.raw, std::ptr::null_mut(), 0, &mut len));
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
        ok!(sys::napi_get_value_string_utf16(self.env, self.raw, buf.as_mut_ptr(), len + 1, &mut written));
        buf.truncate(written);
        Ok(buf)
    }

    /// The string as WTF-8: UTF-8, except that a lone surrogate is written as its own
    /// three-byte sequence (what better-sqlite3 stores for such strings).
    pub fn wtf8(&self) -> SResult<Vec<u8>> {
        // Fast path: napi's UTF-8 read is exact unless it had to replace a lone
        // surrogate with U+FFFD; only then re-read as UTF-16 and encode each unit.
        let mut len = 0usize;
        ok!(sys::napi_get_value_string_utf8(self.env, self.raw, std::ptr::null_mut(), 0, &mut len));
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        ok!(sys::napi_get_value_string_utf8(self.env, self.raw, buf.as_mut_ptr().cast(), len + 1, &mut written));
        buf.truncate(written);
        if !buf.windows(3).any(|w| w == [0xEF, 0xBF, 0xBD]) {
            return Ok(buf);
        }
        Ok(wtf8_from_utf16(&self.utf16()?))
    }

    pub fn is_array(&self) -> SResult<bool> {
        if !self.is_object() {
            return Ok(false);
        }
        let mut r = false;
        ok!(sys::napi_is_array(self.env, self.raw, &mut r));
        Ok(r)
    }

    /// Buffer, any typed array or DataView (what better-sqlite3 binds as a BLOB).
    pub fn is_buffer(&self) -> SResult<bool> {
        if !self.is_object() {
            return Ok(false);
        }
        let (mut buffer, mut typed, mut view) = (false, false, false);
        ok!(sys::napi_is_buffer(self.env, self.raw, &mut buffer));
        ok!(sys::napi_is_typedarray(self.env, self.raw, &mut typed));
        ok!(sys::napi_is_dataview(self.env, self.raw, &mut view));
        Ok(buffer || typed || view)
    }

    /// The bytes of a Buffer, typed array or DataView (see [`JsVal::is_buffer`]).
    pub fn buffer_bytes(&self) -> SResult<Vec<u8>> {
        let (mut typed, mut view) = (false, false);
        ok!(sys::napi_is_typedarray(self.env, self.raw, &mut typed));
        ok!(sys::napi_is_dataview(self.env, self.raw, &mut view));
        let mut data = std::ptr::null_mut();
        let mut byte_len = 0usize;
        if typed {
            let (mut ty, mut length, mut arraybuffer, mut offset) = (0, 0usize, std::ptr::null_mut(), 0usize);
            ok!(sys::napi_get_typedarray_info(
                self.env, self.raw, &mut ty, &mut length, &mut data, &mut arraybuffer, &mut offset,
            ));
            // Node-API gives the length in elements: an element type this build does not
            // know (a newer Node's Float16Array) has no size we could trust.
            let Some(size) = typed_array_element_size(ty) else {
                return Err(StoreError::type_error("SQLite3 can only bind numbers, strings, bigints, buffers, and null"));
            };
            byte_len = length.checked_mul(size).ok_or(StoreError::range_error("The bound string, buffer, or bigint is too big"))?;
        } else if view {
            let (mut arraybuffer, mut offset) = (std::ptr::null_mut(), 0usize);
            ok!(sys::napi_get_dataview_info(self.env, self.raw, &mut byte_len, &mut data, &mut arraybuffer, &mut offset));
        } else {
            ok!(sys::napi_get_buffer_info(self.env, self.raw, &mut data, &mut byte_len));
        }
        if data.is_null() || byte_len == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: Node-API reported `byte_len` readable bytes at `data`, which stay
        // alive while this call holds the value.
        Ok(unsafe { std::slice::from_raw_parts(data as *const u8, byte_len) }.to_vec())
    }

    /// better-sqlite3's "plain object": an object whose prototype is Object.prototype or null.
    pub fn is_plain_object(&self) -> SResult<bool> {
        if !self.is_object() || self.is_array()? || self.is_buffer()? {
            return Ok(false);
        }
        let mut proto = std::ptr::null_mut();
        ok!(sys::napi_get_prototype(self.env, self.raw, &mut proto));
        let proto = JsVal::from_raw(self.env, proto)?;
        if proto.is_null() {
            return Ok(true);
        }
        let mut global = std::ptr::null_mut();
        ok!(sys::napi_get_global(self.env, &mut global));
        let mut object_ctor = std::ptr::null_mut();
        ok!(sys::napi_get_named_property(self.env, global, c"Object".as_ptr(), &mut object_ctor));
        let mut object_proto = std::ptr::null_mut();
        ok!(sys::napi_get_named_property(self.env, object_ctor, c"prototype".as_ptr(), &mut object_proto));
        let mut same = false;
        ok!(sys::napi_strict_equals(self.env, proto.raw, object_proto, &mut same));
        Ok(same)
    }

    pub fn undefined(env: sys::napi_env) -> SResult<JsVal> {
        let mut raw = std::ptr::null_mut();
        ok!(sys::napi_get_undefined(env, &mut raw));
        Ok(JsVal { env, raw, ty: sys::ValueType::napi_undefined, prim: Prim::Other })
    }

    /// `x.key`, with V8's TypeError on null/undefined receivers.
    pub fn get(&self, key: &CStr) -> SResult<JsVal> {
        match self.ty {
            sys::ValueType::napi_object | sys::ValueType::napi_function => {
                let mut out = std::ptr::null_mut();
                ok!(sys::napi_get_named_property(self.env, self.raw, key.as_ptr(), &mut out));
                JsVal::from_raw(self.env, out)
            }
            sys::ValueType::napi_undefined | sys::ValueType::napi_null => Err(StoreError::type_error(format!(
                "Cannot read properties of {} (reading '{}')",
                if self.is_null() { "null" } else { "undefined" },
                key.to_string_lossy()
            ))),
            // Primitives: none of the store's field names live on their prototypes.
            _ => JsVal::undefined(self.env),
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

    pub fn array_len(&self) -> SResult<u32> {
        let mut len = 0u32;
        ok!(sys::napi_get_array_length(self.env, self.raw, &mut len));
        Ok(len)
    }

    pub fn element(&self, index: u32) -> SResult<JsVal> {
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_get_element(self.env, self.raw, index, &mut out));
        JsVal::from_raw(self.env, out)
    }

    /// Own enumerable string keys, in JS order (`Object.keys`).
    pub fn keys(&self) -> SResult<Vec<JsVal>> {
        let mut arr = std::ptr::null_mut();
        ok!(sys::napi_get_property_names(self.env, self.raw, &mut arr));
        let arr = JsVal::from_raw(self.env, arr)?;
        (0..arr.array_len()?).map(|i| arr.element(i)).collect()
    }

    /// `x[key]` for a key given as a JS value.
    pub fn get_by(&self, key: &JsVal) -> SResult<JsVal> {
        let mut out = std::ptr::null_mut();
        ok!(sys::napi_get_property(self.env, self.raw, key.raw, &mut out));
        JsVal::from_raw(self.env, out)
    }
}

/// Bytes per element of the typed arrays Node-API knows; None for any other type.
fn typed_array_element_size(ty: sys::napi_typedarray_type) -> Option<usize> {
    use sys::TypedarrayType as T;
    match ty {
        T::int8_array | T::uint8_array | T::uint8_clamped_array => Some(1),
        T::int16_array | T::uint16_array => Some(2),
        T::int32_array | T::uint32_array | T::float32_array => Some(4),
        T::float64_array | T::bigint64_array | T::biguint64_array => Some(8),
        _ => None,
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
