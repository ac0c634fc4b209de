//! The handle scopes of user callbacks: a callback that its statement step runs itself
//! makes its values in its caller's scope if it is one of the step's first [`BARE`], else
//! shares one scope with the step's other callbacks ([`BATCH`] at a time, kept in the
//! step's frame); any other callback gets a scope of its own. Opening and closing a
//! Node-API scope costs more than a small callback.

use std::cell::Cell;

use crate::error::SResult;
use crate::ffi::napi::{JsRef, Napi, Raw, Scope};

use super::frames::{self, CallbackRunning, StepResource};

/// The handle scope for one user callback of connection `db`, which counts itself
/// running (busy) for as long as the returned guard lives. A callback that its
/// statement step runs itself makes its values in its caller's scope if it is one of
/// the step's first [`BARE`], else shares one scope with the step's other callbacks,
/// renewed every [`BATCH`] callbacks and closed when the step returns (opening and
/// closing a Node-API scope costs more than a small callback); any other callback
/// gets a scope of its own.
pub fn callback_scope(js: Napi, db: u32) -> SResult<(CallbackScope, CallbackRunning)> {
    if let Some((epoch, running)) = frames::enter_bare(db, BARE) {
        return Ok((CallbackScope::Batch(epoch), running));
    }
    // Taken before entering: the step frames are busy while `enter_callback` runs.
    let epoch = frames::new_epoch();
    frames::enter_callback(db, |slot| {
        let Some(slot) = slot else {
            return Ok(CallbackScope::Own { _scope: js.scope()? });
        };
        if let Some(lent) = slot.as_mut().filter(|lent| lent.owner == js.env() as usize) {
            lent.used += 1;
            if lent.used < BATCH {
                return Ok(CallbackScope::Batch(lent.epoch));
            }
        }
        // Closes the step's old scope (no scope opened since is still open: the
        // step's earlier callbacks have returned) before opening its successor.
        *slot = None;
        let scope = js.scope()?;
        *slot = Some(StepResource {
            owner: js.env() as usize,
            used: 0,
            epoch,
            resource: Box::new(scope),
        });
        Ok(CallbackScope::Batch(epoch))
    })
}

/// [`callback_scope`] when the step's shared scope can take one more callback
/// as it is (the usual call): None, with nothing entered, otherwise.
#[inline]
pub fn lent_callback_scope(js: Napi, db: u32) -> Option<(CallbackScope, CallbackRunning)> {
    frames::enter_lent(db, js.env() as usize, BATCH).map(|(epoch, running)| (CallbackScope::Batch(epoch), running))
}

/// How many callbacks of one step share a handle scope: few enough that their values
/// stay a few V8 handle blocks, enough that opening the scope costs next to nothing.
const BATCH: u32 = 256;

/// How many callbacks of one step use the caller's scope before the step opens one
/// (`frames::enter_bare`): a step that runs a function once per row pays no scope.
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
/// constants that stand for arguments left in the call frame (`call`).
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
