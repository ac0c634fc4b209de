//! Throwing a [`StoreError`] into JS. SQLite failures become instances of the glue's
//! `SqliteError` class (registered once, so `instanceof` works like better-sqlite3's);
//! the others become TypeError/RangeError/Error, with `.code` for domain errors.
//!
//! This is the one place that creates JS exceptions through raw Node-API calls; every
//! status is checked, and when one fails the fallback is napi-rs's own plain `Error`.

use std::cell::Cell;
use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::sqlite::error::{JsKind, StoreError};

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
            StoreError::Sqlite { message, .. } | StoreError::Js { message, .. } => message.clone(),
            StoreError::Pending => String::new(),
        };
        // SAFETY: `env` is the live environment of the current native call.
        match unsafe { throw_raw(env, self) } {
            Ok(()) => napi::Error::new(napi::Status::PendingException, String::new()),
            // Could not build the exception ourselves: let napi-rs throw a plain Error.
            Err(()) => napi::Error::from_reason(message),
        }
    }
}

/// Registers the constructor used for SQLite failures: `new Ctor(message, code)`.
#[napi]
pub fn register_sqlite_error(env: Env, ctor: Function<'_>) -> Result<()> {
    let mut reference = std::ptr::null_mut();
    // SAFETY: `ctor` is a live value of this call; the reference is owned by the slot below.
    let status = unsafe { sys::napi_create_reference(env.raw(), ctor.raw(), 1, &mut reference) };
    if status != sys::Status::napi_ok {
        return Err(Error::from_reason("could not keep the SqliteError class"));
    }
    let old = SQLITE_ERROR_CTOR.with(|c| c.replace(reference));
    if !old.is_null() {
        // SAFETY: `old` was created above by an earlier call and is no longer stored.
        let status = unsafe { sys::napi_delete_reference(env.raw(), old) };
        if status != sys::Status::napi_ok {
            return Err(Error::from_reason("could not release the previous SqliteError class"));
        }
    }
    Ok(())
}

fn ok(status: sys::napi_status) -> std::result::Result<(), ()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(())
    }
}

unsafe fn string(env: sys::napi_env, s: &str) -> std::result::Result<sys::napi_value, ()> {
    let mut v = std::ptr::null_mut();
    ok(sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut v))?;
    Ok(v)
}

unsafe fn set_str_prop(env: sys::napi_env, obj: sys::napi_value, key: &CStr, value: &str) -> std::result::Result<(), ()> {
    let v = string(env, value)?;
    ok(sys::napi_set_named_property(env, obj, key.as_ptr(), v))
}

/// Throws `err` unless an exception is already pending (a caller's callback threw first:
/// that exception is the one JS must see).
unsafe fn throw_raw(env: sys::napi_env, err: StoreError) -> std::result::Result<(), ()> {
    let mut pending = false;
    ok(sys::napi_is_exception_pending(env, &mut pending))?;
    if pending {
        return Ok(());
    }
    let (kind, message, code, sqlite) = match err {
        StoreError::Pending => return Ok(()),
        StoreError::Sqlite { code, message } => (JsKind::Error, message, Some(code), true),
        StoreError::Js { kind, message, code } => (kind, message, code, false),
    };
    let msg = string(env, &message)?;
    if sqlite {
        if let Some(error) = new_sqlite_error(env, msg, code.as_deref().unwrap_or(""))? {
            return ok(sys::napi_throw(env, error));
        }
    }
    let mut error = std::ptr::null_mut();
    let no_code = std::ptr::null_mut();
    ok(match kind {
        JsKind::Error => sys::napi_create_error(env, no_code, msg, &mut error),
        JsKind::TypeError => sys::napi_create_type_error(env, no_code, msg, &mut error),
        JsKind::RangeError => sys::napi_create_range_error(env, no_code, msg, &mut error),
    })?;
    if sqlite {
        set_str_prop(env, error, c"name", "SqliteError")?;
    }
    if let Some(code) = code {
        set_str_prop(env, error, c"code", &code)?;
    }
    ok(sys::napi_throw(env, error))
}

/// `new SqliteError(message, code)`, or None when the glue registered no class.
unsafe fn new_sqlite_error(env: sys::napi_env, message: sys::napi_value, code: &str) -> std::result::Result<Option<sys::napi_value>, ()> {
    let reference = SQLITE_ERROR_CTOR.with(|c| c.get());
    if reference.is_null() {
        return Ok(None);
    }
    let mut ctor = std::ptr::null_mut();
    ok(sys::napi_get_reference_value(env, reference, &mut ctor))?;
    if ctor.is_null() {
        return Ok(None);
    }
    let args = [message, string(env, code)?];
    let mut out = std::ptr::null_mut();
    ok(sys::napi_new_instance(env, ctor, 2, args.as_ptr(), &mut out))?;
    Ok(Some(out))
}
