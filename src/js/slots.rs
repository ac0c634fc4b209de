//! The result slots of this thread's JS environment (`napi::ResultSlots`): the numbers
//! a statement call leaves beside its return value. JS asks for the array once
//! (`native.resultSlots()`, the same array on every call) and reads a slot right after
//! the call that wrote it.

use std::cell::OnceCell;

use crate::error::{SResult, StoreError};
use crate::js::napi::{Napi, Raw, ResultSlots};
use crate::js::throw::Throw;

/// `stmt.run()`'s `lastInsertRowid`.
pub const LAST_ROWID: usize = 0;
/// The shape of the one-column row a FLAT `get` returns as its value, or -1.
pub const ROW_SHAPE: usize = 1;
/// How many user callbacks are registered on this thread (`js::callbacks::Registered`):
/// JS checks whether a connection is busy only when this is not 0.
pub const CALLBACKS: usize = 2;
const COUNT: usize = 3;

thread_local! {
    // One JS environment per thread (the main thread's, or a worker's).
    static SLOTS: OnceCell<ResultSlots> = const { OnceCell::new() };
}

/// `native.resultSlots()`: the Float64Array of this environment's slots.
pub fn result_slots(js: Napi, _args: &[Raw]) -> napi::Result<Raw> {
    let array = SLOTS.with(|cell| match cell.get() {
        Some(slots) => slots.array(js),
        None => {
            let slots = ResultSlots::new(js, COUNT)?;
            let array = slots.array(js);
            let _ = cell.set(slots);
            array
        }
    });
    array.map_err(|e| e.throw(js.env()))
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
