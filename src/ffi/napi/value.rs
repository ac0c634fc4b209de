//! A JS value as a native call receives it: its type and, for a number or a BigInt, its
//! value, read once (statuses checked) when it is wrapped. Its JavaScript semantics are
//! the engine's (`engine::js::value`); here is only what Node-API tells at once, and the
//! conversion napi-rs calls for a native function's argument.

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi::ValueType;

use super::{Napi, Raw};
use crate::error::SResult;

#[derive(Clone, Copy)]
pub struct JsVal {
    pub(crate) napi: Napi,
    pub(crate) raw: Raw,
    ty: sys::napi_valuetype,
    /// A number's or BigInt's value, read (status checked) when the value is wrapped, so
    /// that binding it needs no further Node-API call.
    prim: Prim,
}

#[derive(Clone, Copy)]
enum Prim {
    Other,
    Number(f64),
    BigInt { value: i64, lossless: bool },
}

impl FromNapiValue for JsVal {
    // SAFETY (of the trait's contract): napi-rs passes this call's environment and one of
    // its values; both are only handed back to Node-API.
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
    pub fn from_raw(env: sys::napi_env, raw: Raw) -> SResult<Self> {
        JsVal::wrap(Napi::new(env), raw)
    }

    pub fn wrap(napi: Napi, raw: Raw) -> SResult<Self> {
        let ty = napi.type_of(raw)?;
        let prim = match ty {
            sys::ValueType::napi_number => Prim::Number(napi.double(raw)?),
            sys::ValueType::napi_bigint => {
                let (value, lossless) = napi.bigint_i64(raw)?;
                Prim::BigInt { value, lossless }
            }
            _ => Prim::Other,
        };
        Ok(JsVal { napi, raw, ty, prim })
    }

    /// A value its maker said is a string (a callback's trampoline), taken without asking
    /// its type again.
    pub fn string(napi: Napi, raw: Raw) -> Self {
        JsVal {
            napi,
            raw,
            ty: sys::ValueType::napi_string,
            prim: Prim::Other,
        }
    }

    /// The value itself, to hand back to Node-API.
    pub fn raw(&self) -> Raw {
        self.raw
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
    pub fn is_string(&self) -> bool {
        self.ty == sys::ValueType::napi_string
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

    /// A BigInt's value as i64 and whether that is exact; None for other types.
    pub fn bigint_i64(&self) -> Option<(i64, bool)> {
        match self.prim {
            Prim::BigInt { value, lossless } => Some((value, lossless)),
            _ => None,
        }
    }
}
