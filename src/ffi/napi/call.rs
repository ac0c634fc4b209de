//! Node-API calls that user callbacks need (part of [`super`]): calling a JS function,
//! handle scopes, booleans, and references that release themselves while their
//! environment lives.
//!
//! A callback runs inside SQLite (a user function, an aggregate step, a virtual table's
//! cursor) which runs inside a native call on the JS thread, so the environment saved
//! when the callback was registered is the current one.

use std::cell::Cell;

use napi::sys;

use super::{check, Napi, Raw};
use crate::error::{SResult, StoreError};

thread_local! {
    /// Whether this thread's JS environment is still alive: cleared by a cleanup hook
    /// when it is torn down, after which references are left for V8 to drop with it.
    static ENV_ALIVE: Cell<bool> = const { Cell::new(false) };
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

unsafe extern "C" fn env_gone(_arg: *mut std::ffi::c_void) {
    ENV_ALIVE.with(|alive| alive.set(false));
}

impl Napi {
    /// `f.call(undefined, ...args)`. A JS exception stays pending and is reported as
    /// [`StoreError::Pending`]: the caller lets it reach JS unchanged.
    pub fn call(self, f: Raw, recv: Raw, args: &[Raw]) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |r| sys::napi_call_function(
            self.0,
            recv,
            f,
            args.len(),
            if args.is_empty() {
                std::ptr::null()
            } else {
                args.as_ptr()
            },
            &mut r
        ))
    }

    /// A number's value, or None for any other type (one call where `typeof` and a read
    /// would be two: most callback results are numbers).
    pub fn number_value(self, v: Raw) -> Option<f64> {
        let mut n = 0f64;
        // SAFETY: a value of the current call and a valid out-pointer; a non-number is
        // reported as a status (napi_number_expected), with no exception thrown.
        let status = unsafe { sys::napi_get_value_double(self.0, v, &mut n) };
        (status == sys::Status::napi_ok).then_some(n)
    }

    pub fn boolean(self, b: bool) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |r| sys::napi_get_boolean(self.0, b, &mut r))
    }

    pub fn bool_value(self, v: Raw) -> SResult<bool> {
        out!(false, |b| sys::napi_get_value_bool(self.0, v, &mut b))
    }

    /// Values created until the scope drops are released then (a callback runs once per
    /// row: without a scope of its own, its values would live until the statement ends).
    pub fn scope(self) -> SResult<Scope> {
        let scope = out!(std::ptr::null_mut(), |s| sys::napi_open_handle_scope(self.0, &mut s))?;
        Ok(Scope { env: self.0, scope })
    }

    /// A strong reference released on drop (see [`JsRef`]).
    pub fn keep(self, v: Raw) -> SResult<JsRef> {
        if !HOOKED.with(|h| h.replace(true)) {
            // SAFETY: a plain function with no data, registered once per thread's environment.
            check(unsafe { sys::napi_add_env_cleanup_hook(self.0, Some(env_gone), std::ptr::null_mut()) })?;
            ENV_ALIVE.with(|alive| alive.set(true));
        }
        let r = self.reference(v)?;
        Ok(JsRef { env: self.0, r })
    }
}

/// An open handle scope, closed on drop.
pub struct Scope {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
}

impl Drop for Scope {
    fn drop(&mut self) {
        // SAFETY: the scope this environment opened, closed once, innermost first (scopes
        // live on the Rust stack of the callback that opened them, or in the frame of the
        // step whose callbacks share them, dropped when that step returns or when its next
        // callback starts). The status can only report a misuse, which the nesting rules out.
        unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
    }
}

/// A strong reference to a JS value kept by Rust (a user function, an aggregate's value, a
/// table's iterator). Deleted on drop unless the environment is gone (V8 then frees it).
pub struct JsRef {
    env: sys::napi_env,
    r: sys::napi_ref,
}

impl JsRef {
    pub fn get(&self, js: Napi) -> SResult<Raw> {
        let v = js.reference_value(self.r)?;
        if v.is_null() {
            return Err(StoreError::error("a kept JS value was collected"));
        }
        Ok(v)
    }
}

impl Drop for JsRef {
    fn drop(&mut self) {
        if ENV_ALIVE.with(|alive| alive.get()) {
            // SAFETY: the reference was made in this thread's environment, which is alive;
            // deleted once. A failure leaves it to the environment's teardown.
            unsafe { sys::napi_delete_reference(self.env, self.r) };
        }
    }
}
