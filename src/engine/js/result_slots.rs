//! The result slots of this thread's JS environment (`ffi::napi::ResultSlots`): the
//! numbers a statement call leaves beside its return value, at the places
//! `protocol::slot` names. JS asks for the array once (`native.resultSlots()`, the same
//! array on every call) and reads a slot right after the call that wrote it.

use std::cell::OnceCell;

use super::protocol::slot;
use crate::engine::js::throw::Throw;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw, ResultSlots};

thread_local! {
    // One JS environment per thread (the main thread's, or a worker's).
    static SLOTS: OnceCell<ResultSlots> = const { OnceCell::new() };
}

/// `native.resultSlots()`: the Float64Array of this environment's slots.
pub fn result_slots(js: Napi, _args: &[Raw]) -> napi::Result<Raw> {
    let array = SLOTS.with(|cell| match cell.get() {
        Some(slots) => slots.array(js),
        None => {
            let slots = ResultSlots::new(js, slot::SLOTS)?;
            slots.put(slot::CALL_SHARED, 1.0);
            let array = slots.array(js);
            let _ = cell.set(slots);
            array
        }
    });
    array.map_err(|e| e.throw(js.env()))
}

/// Slot `index` as last written (0 before the slots exist).
pub fn get(index: usize) -> f64 {
    SLOTS.with(|cell| cell.get().map_or(0.0, |slots| slots.get(index)))
}

/// Writes slot `index` for the JS layer to read after this call.
pub fn set(js: Napi, index: usize, value: f64) -> SResult<()> {
    SLOTS.with(|cell| match cell.get() {
        Some(slots) => slots.set(js, index, value),
        None => Err(StoreError::error(
            "the result slots were never made (native.resultSlots)",
        )),
    })
}

/// Runs `f` with this thread's slots when they are memory shared with JS (None before
/// they exist or where they are V8's own): what the callback frame is written through.
#[inline]
pub fn with_shared<R>(f: impl FnOnce(Option<&ResultSlots>) -> R) -> R {
    SLOTS.with(|cell| f(cell.get().filter(|slots| slots.shared())))
}
