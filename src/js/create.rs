//! Creating JS values directly through Node-API, for the facade's `get()` hot path
//! (building a row through napi-rs's typed wrappers or JSON costs more). Every status
//! is checked; a failure means V8 has an exception pending (e.g. out of memory).

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::sys;
use napi::ValueType;

use crate::sqlite::error::{SResult, StoreError};

/// A JS value made here, returned to JS as is.
#[derive(Clone, Copy)]
pub struct Made(sys::napi_value);

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

fn check(status: sys::napi_status) -> SResult<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(StoreError::Pending)
    }
}

/// Builds values in one environment.
#[derive(Clone, Copy)]
pub struct Maker {
    env: sys::napi_env,
}

impl Maker {
    pub fn new(env: sys::napi_env) -> Self {
        Maker { env }
    }

    pub fn number(&self, v: f64) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        // SAFETY: `env` is the live environment of the current call; `out` is written by V8.
        check(unsafe { sys::napi_create_double(self.env, v, &mut out) })?;
        Ok(Made(out))
    }

    /// A string from UTF-8 bytes, decoded by V8 (invalid sequences become U+FFFD exactly
    /// as better-sqlite3's `StringFromUtf8` gives them).
    pub fn string_utf8(&self, bytes: &[u8]) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        let ptr = if bytes.is_empty() { c"".as_ptr() } else { bytes.as_ptr().cast() };
        // SAFETY: `ptr` points at `bytes.len()` readable bytes.
        check(unsafe { sys::napi_create_string_utf8(self.env, ptr, bytes.len() as isize, &mut out) })?;
        Ok(Made(out))
    }

    /// A Buffer holding a copy of `bytes`.
    pub fn buffer(&self, bytes: &[u8]) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        let mut data = std::ptr::null_mut();
        let ptr = if bytes.is_empty() { c"".as_ptr().cast() } else { bytes.as_ptr().cast() };
        // SAFETY: V8 copies `bytes.len()` bytes from `ptr`.
        check(unsafe { sys::napi_create_buffer_copy(self.env, bytes.len(), ptr, &mut data, &mut out) })?;
        Ok(Made(out))
    }

    pub fn null(&self) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_get_null(self.env, &mut out) })?;
        Ok(Made(out))
    }

    pub fn undefined(&self) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_get_undefined(self.env, &mut out) })?;
        Ok(Made(out))
    }

    pub fn array(&self, len: usize) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_create_array_with_length(self.env, len, &mut out) })?;
        Ok(Made(out))
    }

    pub fn object(&self) -> SResult<Made> {
        let mut out = std::ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_create_object(self.env, &mut out) })?;
        Ok(Made(out))
    }

    pub fn set_element(&self, array: Made, index: u32, value: Made) -> SResult<()> {
        // SAFETY: both values belong to this environment's current scope.
        check(unsafe { sys::napi_set_element(self.env, array.0, index, value.0) })
    }

    /// `object[key] = value` with `key` from UTF-8 bytes (like better-sqlite3's `row->Set`,
    /// so a duplicate column name keeps its first position and the last value).
    pub fn set_property(&self, object: Made, key: &[u8], value: Made) -> SResult<()> {
        let key = self.string_utf8(key)?;
        // SAFETY: as above.
        check(unsafe { sys::napi_set_property(self.env, object.0, key.0, value.0) })
    }
}
