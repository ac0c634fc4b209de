//! Throwing a [`StoreError`] into JS. SQLite failures become instances of the JS layer's
//! `SqliteError` class (registered once, so `instanceof` works like better-sqlite3's);
//! the others become TypeError/RangeError/Error, with `.code` for domain errors.
//!
//! Every Node-API status is checked (through `ffi::napi`); when one fails the fallback is
//! napi-rs's own plain `Error`.

use std::cell::Cell;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::error::{sqlite_code_name, JsKind, SResult, StoreError};
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite as raw;

thread_local! {
    static SQLITE_ERROR_CTOR: Cell<sys::napi_ref> = const { Cell::new(std::ptr::null_mut()) };
}

/// Turns a failure into a pending JS exception.
pub trait Throw {
    /// Throws into JS and returns the napi error telling napi-rs an exception is pending.
    fn throw(self, env: sys::napi_env) -> napi::Error;
}

impl Throw for StoreError {
    fn throw(self, env: sys::napi_env) -> napi::Error {
        let message = match &self {
            StoreError::Sqlite { code, message } => message.clone().unwrap_or_else(|| raw::errstr(*code)),
            StoreError::Js { message, .. } => message.clone(),
            StoreError::Pending => String::new(),
        };
        match throw_raw(Napi::new(env), self) {
            Ok(()) => napi::Error::new(napi::Status::PendingException, String::new()),
            // Could not build the exception ourselves: let napi-rs throw a plain Error.
            Err(_) => napi::Error::from_reason(message),
        }
    }
}

/// Registers the constructor used for SQLite failures: `new Ctor(message, code)`.
#[napi]
pub fn register_sqlite_error(env: Env, ctor: Function<'_>) -> Result<()> {
    let napi = Napi::new(env.raw());
    let reference = napi
        .reference(ctor.raw())
        .map_err(|_| Error::from_reason("could not keep the SqliteError class"))?;
    let old = SQLITE_ERROR_CTOR.with(|c| c.replace(reference));
    if !old.is_null() {
        napi.delete_reference(old)
            .map_err(|_| Error::from_reason("could not release the previous SqliteError class"))?;
    }
    Ok(())
}

/// Throws `err` unless an exception is already pending (a caller's callback threw first:
/// that exception is the one JS must see).
fn throw_raw(napi: Napi, err: StoreError) -> SResult<()> {
    if napi.exception_pending()? {
        return Ok(());
    }
    let (kind, message, code, sqlite) = match err {
        StoreError::Pending => return Ok(()),
        StoreError::Sqlite { code, message } => (
            JsKind::Error,
            message.unwrap_or_else(|| raw::errstr(code)),
            Some(sqlite_code_name(code)),
            true,
        ),
        StoreError::Js { kind, message, code } => (kind, message, code, false),
    };
    let msg = napi.string_utf8(message.as_bytes())?;
    if sqlite {
        if let Some(error) = new_sqlite_error(napi, msg, code.as_deref().unwrap_or(""))? {
            return napi.throw(error);
        }
    }
    let error = match kind {
        JsKind::Error => napi.error(msg)?,
        JsKind::TypeError => napi.type_error(msg)?,
        JsKind::RangeError => napi.range_error(msg)?,
    };
    if sqlite {
        napi.set_named_property(error, c"name", napi.string_utf8(b"SqliteError")?)?;
    }
    if let Some(code) = code {
        napi.set_named_property(error, c"code", napi.string_utf8(code.as_bytes())?)?;
    }
    napi.throw(error)
}

/// `new SqliteError(message, code)`, or None when the JS layer registered no class.
fn new_sqlite_error(napi: Napi, message: Raw, code: &str) -> SResult<Option<Raw>> {
    let reference = SQLITE_ERROR_CTOR.with(|c| c.get());
    if reference.is_null() {
        return Ok(None);
    }
    let ctor = napi.reference_value(reference)?;
    if ctor.is_null() {
        return Ok(None);
    }
    Ok(Some(
        napi.new_instance(ctor, &[message, napi.string_utf8(code.as_bytes())?])?,
    ))
}
