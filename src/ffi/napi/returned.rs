//! A JS value built directly through `ffi::napi` and returned to JS as is: the facade's
//! `get()` hot path (building a row through napi-rs's typed wrappers or JSON costs more).

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::sys;
use napi::ValueType;

use crate::ffi::napi::Raw;

#[derive(Clone, Copy)]
pub struct Returned(pub Raw);

impl ToNapiValue for Returned {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl TypeName for Returned {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}
