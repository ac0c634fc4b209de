//! Creating JS values directly, for the facade's `get()` hot path (building a row
//! through napi-rs's typed wrappers or JSON costs more). The calls are `js::napi`'s.

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::sys;
use napi::ValueType;

use crate::js::napi::{Napi, Raw};
use crate::sqlite::error::SResult;

/// A JS value made here, returned to JS as is.
#[derive(Clone, Copy)]
pub struct Made(Raw);

impl ToNapiValue for Made {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl TypeName for Made {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

/// Builds values in one environment.
#[derive(Clone, Copy)]
pub struct Maker(Napi);

impl Maker {
    pub fn new(env: sys::napi_env) -> Self {
        Maker(Napi::new(env))
    }

    pub fn number(&self, v: f64) -> SResult<Made> {
        Ok(Made(self.0.number(v)?))
    }

    /// A string from UTF-8 bytes, decoded by V8 (invalid sequences become U+FFFD exactly
    /// as better-sqlite3's `StringFromUtf8` gives them).
    pub fn string_utf8(&self, bytes: &[u8]) -> SResult<Made> {
        Ok(Made(self.0.string_utf8(bytes)?))
    }

    /// A Buffer holding a copy of `bytes`.
    pub fn buffer(&self, bytes: &[u8]) -> SResult<Made> {
        Ok(Made(self.0.buffer_copy(bytes)?))
    }

    pub fn null(&self) -> SResult<Made> {
        Ok(Made(self.0.null()?))
    }

    pub fn undefined(&self) -> SResult<Made> {
        Ok(Made(self.0.undefined()?))
    }

    pub fn array(&self, len: usize) -> SResult<Made> {
        Ok(Made(self.0.array(len)?))
    }

    pub fn object(&self) -> SResult<Made> {
        Ok(Made(self.0.object()?))
    }

    pub fn set_element(&self, array: Made, index: u32, value: Made) -> SResult<()> {
        self.0.set_element(array.0, index, value.0)
    }

    /// `object[key] = value` with `key` from UTF-8 bytes (like better-sqlite3's `row->Set`,
    /// so a duplicate column name keeps its first position and the last value).
    pub fn set_property(&self, object: Made, key: &[u8], value: Made) -> SResult<()> {
        let key = self.0.string_utf8(key)?;
        self.0.set_property(object.0, key, value.0)
    }
}
