//! Node-API calls that user callbacks need (part of `js::napi`, the one module that calls
//! Node-API): calling a JS function, the handle scopes of callbacks, BigInt values, booleans,
//! and references that release themselves while their environment lives.
//!
//! A callback runs inside SQLite (a user function, an aggregate step, a virtual table's
//! cursor) which runs inside a native call on the JS thread, so the environment saved
//! when the callback was registered is the current one.

use std::cell::Cell;

use napi::sys;

use super::{check, Napi, Raw};
use crate::engine::callbacks::frames::{self as step_frames, CallbackRunning, Lent};
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

    /// The handle scope for one user callback of connection `db`, which counts itself
    /// running (busy) for as long as the returned guard lives. A callback that its
    /// statement step runs itself makes its values in its caller's scope if it is one of
    /// the step's first [`BARE`], else shares one scope with the step's other callbacks,
    /// renewed every [`BATCH`] callbacks and closed when the step returns (opening and
    /// closing a Node-API scope costs more than a small callback); any other callback
    /// gets a scope of its own.
    pub fn callback_scope(self, db: u32) -> SResult<(CallbackScope, CallbackRunning)> {
        if let Some((epoch, running)) = step_frames::enter_bare(db, BARE) {
            return Ok((CallbackScope::Batch(epoch), running));
        }
        // Taken before entering: the step frames are busy while `enter_callback` runs.
        let epoch = step_frames::new_epoch();
        step_frames::enter_callback(db, |slot| {
            let Some(slot) = slot else {
                return Ok(CallbackScope::Own { _scope: self.scope()? });
            };
            if let Some(lent) = slot.as_mut().filter(|lent| lent.owner == self.0 as usize) {
                lent.used += 1;
                if lent.used < BATCH {
                    return Ok(CallbackScope::Batch(lent.epoch));
                }
            }
            // Closes the step's old scope (no scope opened since is still open: the
            // step's earlier callbacks have returned) before opening its successor.
            *slot = None;
            let scope = self.scope()?;
            *slot = Some(Lent {
                owner: self.0 as usize,
                used: 0,
                epoch,
                resource: Box::new(scope),
            });
            Ok(CallbackScope::Batch(epoch))
        })
    }

    /// [`Self::callback_scope`] when the step's shared scope can take one more callback
    /// as it is (the usual call): None, with nothing entered, otherwise.
    #[inline]
    pub fn lent_callback_scope(self, db: u32) -> Option<(CallbackScope, CallbackRunning)> {
        step_frames::enter_lent(db, self.0 as usize, BATCH)
            .map(|(epoch, running)| (CallbackScope::Batch(epoch), running))
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

/// How many callbacks of one step share a handle scope: few enough that their values
/// stay a few V8 handle blocks, enough that opening the scope costs next to nothing.
const BATCH: u32 = 256;

/// How many callbacks of one step use the caller's scope before the step opens one
/// (`step_frames::enter_bare`): a step that runs a function once per row pays no scope.
const BARE: u32 = 4;

/// A callback's handle scope: its own, or its step's shared one, which has an epoch
/// (unique to this thread) for as long as the values made in it live.
pub enum CallbackScope {
    Own { _scope: Scope },
    Batch(u64),
}

impl CallbackScope {
    /// The epoch of a shared scope, None for a callback's own.
    pub fn epoch(&self) -> Option<u64> {
        match self {
            CallbackScope::Own { .. } => None,
            CallbackScope::Batch(epoch) => Some(*epoch),
        }
    }
}

/// The values one callback call passes besides its arguments: the function, and the
/// constants that stand for arguments left in the call frame (`js::callbacks`).
#[derive(Clone, Copy)]
pub struct CallValues {
    pub func: Raw,
    pub undefined: Raw,
    pub null: Raw,
    pub yes: Raw,
    pub no: Raw,
}

impl CallValues {
    /// The values for a call of the function `f` refers to, made now.
    pub fn new(js: Napi, f: &JsRef) -> SResult<Self> {
        Ok(CallValues {
            func: f.get(js)?,
            undefined: js.undefined()?,
            null: js.null()?,
            yes: js.boolean(true)?,
            no: js.boolean(false)?,
        })
    }
}

/// JS values saved for the callbacks that share a scope with the one that made them
/// (by default [`CallValues`]): reading a reference and the constants once per batch
/// instead of once per callback.
pub struct ScopeCache<T: Copy = CallValues> {
    saved: Cell<Option<(u64, T)>>,
}

impl<T: Copy> Default for ScopeCache<T> {
    fn default() -> Self {
        ScopeCache { saved: Cell::new(None) }
    }
}

impl<T: Copy> ScopeCache<T> {
    /// The values saved for the shared scope of `epoch`, else `make`'s (saved when there
    /// is such a scope; a callback's own scope has no epoch).
    #[inline]
    pub fn get_or(&self, epoch: Option<u64>, make: impl FnOnce() -> SResult<T>) -> SResult<T> {
        match (epoch, self.saved.get()) {
            (Some(now), Some((then, values))) if now == then => Ok(values),
            _ => self.refill(epoch, make),
        }
    }

    #[cold]
    #[inline(never)]
    fn refill(&self, epoch: Option<u64>, make: impl FnOnce() -> SResult<T>) -> SResult<T> {
        let values = make()?;
        if let Some(now) = epoch {
            self.saved.set(Some((now, values)));
        }
        Ok(values)
    }
}

impl ScopeCache {
    /// The function `f` refers to and the constants, saved while `scope` is shared.
    pub fn get(&self, js: Napi, scope: &CallbackScope, f: &JsRef) -> SResult<CallValues> {
        self.get_or(scope.epoch(), || CallValues::new(js, f))
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
