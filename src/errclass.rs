//! The `SqliteError` class lives in the JS glue (so `instanceof` works like
//! better-sqlite3's); the glue registers it once and Rust constructs instances from it.

use std::cell::Cell;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

thread_local! {
    static SQLITE_ERROR_CTOR: Cell<sys::napi_ref> = const { Cell::new(std::ptr::null_mut()) };
}

/// Registers the constructor used for SQLite failures: `new Ctor(message, code)`.
#[napi]
pub fn register_sqlite_error(env: Env, ctor: Function<'_>) -> Result<()> {
    let mut reference = std::ptr::null_mut();
    unsafe {
        let status = sys::napi_create_reference(env.raw(), ctor.raw(), 1, &mut reference);
        if status != sys::Status::napi_ok {
            return Err(Error::from_reason("could not keep the SqliteError class"));
        }
    }
    SQLITE_ERROR_CTOR.with(|c| {
        let old = c.replace(reference);
        if !old.is_null() {
            unsafe { sys::napi_delete_reference(env.raw(), old) };
        }
    });
    Ok(())
}

/// `new SqliteError(message, code)`, or None when the glue registered no class.
pub(crate) unsafe fn new_sqlite_error(env: sys::napi_env, message: sys::napi_value, code: &str) -> Option<sys::napi_value> {
    let reference = SQLITE_ERROR_CTOR.with(|c| c.get());
    if reference.is_null() {
        return None;
    }
    let mut ctor = std::ptr::null_mut();
    if sys::napi_get_reference_value(env, reference, &mut ctor) != sys::Status::napi_ok || ctor.is_null() {
        return None;
    }
    let mut code_value = std::ptr::null_mut();
    sys::napi_create_string_utf8(env, code.as_ptr().cast(), code.len() as isize, &mut code_value);
    let args = [message, code_value];
    let mut out = std::ptr::null_mut();
    if sys::napi_new_instance(env, ctor, 2, args.as_ptr(), &mut out) != sys::Status::napi_ok {
        return None;
    }
    Some(out)
}
