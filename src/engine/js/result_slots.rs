//! The result slots of this thread's JS environment (`napi::ResultSlots`): the numbers
//! a statement call leaves beside its return value. JS asks for the array once
//! (`native.resultSlots()`, the same array on every call) and reads a slot right after
//! the call that wrote it.

use std::cell::OnceCell;

use crate::engine::js::throw::Throw;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw, ResultSlots};

/// `stmt.run()`'s `lastInsertRowid`.
pub const LAST_ROWID: usize = 0;
/// The form (`js::rows`) JS wraps the lone value a `get()` or an iterator's `next()`
/// returned in (>= 0), or -1 when the value is the row itself (or undefined).
pub const ROW_FORM: usize = 1;
/// The handle + 1 of the connection whose `verbose` logger is running (0: none), so
/// that calls the JS layer answers alone (a reused statement's prepare, pluck()) refuse
/// as better-sqlite3 does while the connection is busy.
pub const BUSY: usize = 2;
/// `stmt.run()`'s `lastInsertRowid` as the 64 bits of an i64 (JS reads the slot through
/// a BigInt64Array view of the same memory with safe integers on).
pub const LAST_ROWID_BITS: usize = 3;
/// How many user callbacks are registered on this thread (`js::callbacks::Registered`):
/// JS checks whether a connection is busy only when this is not 0.
pub const CALLBACKS: usize = 6;
/// Where a slotted row's columns start: two slots per column (`lib/protocol.cjs`
/// ROW_COLUMNS).
pub const ROW_COLUMNS: usize = 7;
/// The most columns a slotted row has.
pub const ROW_COLUMNS_MAX: usize = 16;
/// The call frame of user callbacks (`js::callbacks::call_framed`, lib/database/call-frame.cjs)
/// starts here: 1 when the slots are memory shared with JS, set once when they are made
/// (where they are V8's own, the frame is only a fallback's scratch space).
pub const CALL_SHARED: usize = ROW_COLUMNS + 2 * ROW_COLUMNS_MAX;
/// 1 when the callback's result is the number in CALL_RESULT, else 0 (the result is the
/// JS value the callback returned). Written by JS before each callback returns.
pub const CALL_RESULT_IS_NUMBER: usize = CALL_SHARED + 1;
pub const CALL_RESULT: usize = CALL_RESULT_IS_NUMBER + 1;
/// An aggregate's group (its running value's index in the JS layer's array).
pub const CALL_STATE: usize = CALL_RESULT + 1;
/// An aggregate call's flags (`js::callbacks::aggregate_flags`).
pub const CALL_FLAGS: usize = CALL_STATE + 1;
/// The callback's first arguments, as numbers (32-bit integers, doubles or BigInt bits),
/// from here on.
pub const CALL_ARGS: usize = CALL_FLAGS + 1;
/// How many arguments the frame holds; later ones travel as JS values.
pub const CALL_ARGS_MAX: usize = 16;
/// How many calls are queued for delivery (`js::batch`), as an i32: written before the
/// delivering call.
pub const QUEUE_LEN: usize = CALL_ARGS + CALL_ARGS_MAX;
/// The queued calls from here on: per call two slots of i32 pairs (the runner's index and
/// the group's number; kind, flags and argument count, and the arguments' types), then
/// its arguments as numbers, one slot each.
pub const QUEUE: usize = QUEUE_LEN + 1;
/// The queue's room in slots.
pub const QUEUE_SLOTS: usize = 2048;
const COUNT: usize = QUEUE + QUEUE_SLOTS;

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
            slots.put(CALL_SHARED, 1.0);
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
