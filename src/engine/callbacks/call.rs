//! What every user callback (function, aggregate, virtual table) shares at the JS
//! boundary: SQLite values as JS arguments (through the call frame for functions and
//! aggregates), a JS result as SQLite's, and how a failed callback reports itself. The
//! rules are better-sqlite3's `Data::GetValueJS`, `Data::ResultValueFromJS` and
//! `DataConverter`.

use std::cell::Cell;

use rusqlite::types::ValueRef;
use smallvec::SmallVec;

use crate::engine::callbacks::frames;
use crate::engine::callbacks::scope::CallValues;
use crate::engine::js::protocol::{group, slot};
use crate::engine::js::result_slots as slots;
use crate::engine::js::sql_value::{bound_from_js, value_js, value_js_wrapped};
use crate::engine::js::throw::Throw;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw, ResultSlots};
use crate::ffi::sqlite::create_function::{ResultSink, SqlValue};

thread_local! {
    /// A callback failed since this was last found clear: its error may still be pending.
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a callback of connection `db`'s statement is running (`scope::callback_scope`):
/// better-sqlite3's `busy`, which refuses every use of the connection meanwhile (the
/// store's methods included, as they run statements).
pub fn running_on(db: u32) -> bool {
    frames::running_on(db)
}

/// Counts a registered callback for as long as SQLite keeps it, in the CALLBACKS result
/// slot: the JS layer asks whether a connection is busy (`facadeCheckIdle`) only when a
/// callback exists that could be running, so its checks cost nothing otherwise.
pub struct Registered(Napi);

impl Registered {
    pub fn new(js: Napi) -> Registered {
        count_registered(js, 1);
        Registered(js)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        count_registered(self.0, -1);
    }
}

fn count_registered(js: Napi, delta: i32) {
    let count = frames::count_registered(delta);
    // Unwritable (the environment is gone): nothing is left to check then.
    let _ = slots::set(js, slot::CALLBACKS, f64::from(count));
}

/// Refuses JS-only work on connection `db` while one of its callbacks runs (the JS layer
/// asks only when the CALLBACKS slot says some callback is registered). Unlike `with_handle`, a
/// closed connection is not an error: better-sqlite3's mode switches work on one.
#[napi_derive::napi]
pub fn facade_check_idle(env: napi::Env, db: u32) -> napi::Result<()> {
    if running_on(db) {
        return Err(StoreError::type_error("This database connection is busy executing a query").throw(env.raw()));
    }
    Ok(())
}

/// A callback's JS result as the SQL result. `prefix` names the callback for the
/// errors ("User-defined function f() returned").
pub fn set_result(js: Napi, value: Raw, out: &mut ResultSink, prefix: impl FnOnce() -> String) -> SResult<()> {
    if let Some(n) = js.number_value(value) {
        out.set(ValueRef::Real(n));
        return Ok(());
    }
    let value = JsVal::wrap(js, value)?;
    if value.is_string() {
        return set_text(&value, None, out);
    }
    match bound_from_js(&value) {
        Ok(bound) => {
            out.set(ValueRef::from(&bound));
            Ok(())
        }
        Err(StoreError::Pending) => Err(StoreError::Pending),
        Err(_) if value.bigint_i64().is_some() => Err(StoreError::range_error(c_message(
            prefix() + " a bigint that was too big",
        ))),
        Err(_) => Err(StoreError::type_error(c_message(prefix() + " an invalid value"))),
    }
}

/// better-sqlite3 builds these messages as C strings: a NUL in a name ends them there.
fn c_message(mut message: String) -> String {
    if let Some(nul) = message.find('\0') {
        message.truncate(nul);
    }
    message
}

/// Leaves the callback's failure as the pending JS exception that the statement call
/// throws once SQLite stops: a JS exception already pending is kept (the callback's
/// own throw), any other failure is thrown now.
pub fn report(js: Napi, error: StoreError) {
    FAILED.with(|failed| failed.set(true));
    let error = match error {
        StoreError::Pending if js.exception_pending().unwrap_or(true) => return,
        StoreError::Pending => StoreError::error("triflux-native-store: a Node-API call failed in a user callback"),
        other => other,
    };
    let _ = error.throw(js.env());
}

/// Runs `f` with a callback's failure still pending set aside, as better-sqlite3 runs an
/// aggregate's final `result` while SQLite finishes the groups of a statement that a
/// callback's throw stopped: that throw stays pending after `f`, unless `f` fails (its
/// error is then the statement's, as in better-sqlite3).
pub fn with_failure_set_aside<T>(js: Napi, f: impl FnOnce() -> SResult<T>) -> SResult<T> {
    let set_aside = if FAILED.with(|failed| failed.get()) {
        let pending = js.take_exception()?;
        if pending.is_none() {
            FAILED.with(|failed| failed.set(false));
        }
        pending
    } else {
        None
    };
    let result = f();
    if let (Ok(_), Some(error)) = (&result, set_aside) {
        js.throw(error)?;
    }
    result
}

/// Arguments of one callback call, on the stack for the usual few.
pub type Argv = SmallVec<[Raw; 8]>;

/// Calls a trampoline (lib/database/call-frame.cjs) with the arguments of `call` as it
/// decodes them: a number in its call-frame slot with a marker as the JS argument, an
/// INTEGER that fits 32 bits as an i32 with `false` (JS reads it as V8's small integer,
/// which better-sqlite3's `Number::New` makes too), any other INTEGER or a REAL as an f64
/// with `undefined`, under safeIntegers an INTEGER's bits (read as a BigInt) with `true`;
/// NULL as `null`; TEXT, BLOB, an argument past the frame's slots, or every argument
/// where the slots are not shared memory, as the JS value itself. SQL has no `undefined`
/// or boolean values, so the markers are unambiguous. JS reads the frame before the
/// user's function runs, and writes its result there after: a nested callback's frame
/// cannot clobber either.
pub fn call_framed(js: Napi, call: &FrameCall<'_>) -> SResult<Framed> {
    slots::with_shared(|frame| {
        let values = call.values;
        let value = match frame {
            // The usual few arguments, all within the frame's slots: on the stack.
            Some(frame) if call.args.len() <= FEW => {
                write_state(js, Some(frame), call.state)?;
                let mut argv = [values.undefined; FEW];
                for (i, (slot, arg)) in argv.iter_mut().zip(call.args).enumerate() {
                    *slot = framed_arg(js, frame, call, i, arg)?;
                }
                js.call(values.func, values.undefined, &argv[..call.args.len()])?
            }
            _ => {
                write_state(js, frame, call.state)?;
                let mut argv = Argv::with_capacity(call.args.len());
                for (i, arg) in call.args.iter().enumerate() {
                    argv.push(match frame {
                        Some(frame) if i < slot::CALL_ARGS_MAX => framed_arg(js, frame, call, i, arg)?,
                        _ if arg.get() == ValueRef::Null => values.null,
                        _ => value_js(js, arg.get(), call.safe_ints)?,
                    });
                }
                js.call(values.func, values.undefined, &argv)?
            }
        };
        Ok(Framed::read(value, frame))
    })
}

/// How many arguments a call passes from the stack (fewer than the frame's slots).
const FEW: usize = 8;

/// [`call_framed`] for the usual call of a scalar function: a few arguments and the
/// frame shared memory. None, with nothing called, otherwise (the caller then makes the
/// call through [`call_framed`]). One pass over the arguments: a number goes to its frame
/// slot, TEXT and BLOB become JS values as rows' values do, so a function over text costs
/// only the string more than one over numbers.
#[inline]
pub fn call_scalar(js: Napi, values: &CallValues, args: &[SqlValue], safe_ints: bool) -> Option<SResult<Framed>> {
    if args.len() > FEW {
        return None;
    }
    slots::with_shared(|frame| {
        let frame = frame?;
        Some(call_with_frame(js, frame, values, args, safe_ints))
    })
}

fn call_with_frame(
    js: Napi,
    frame: &ResultSlots,
    values: &CallValues,
    args: &[SqlValue],
    safe_ints: bool,
) -> SResult<Framed> {
    let mut argv = [values.null; FEW];
    for (i, (slot, arg)) in argv.iter_mut().zip(args).enumerate() {
        *slot = match arg.get() {
            // TEXT to its string at once: the usual argument that is not a number.
            ValueRef::Text(text) => js.text(text)?,
            value => match framed_number(frame, values, slot::CALL_ARGS + i, value, safe_ints) {
                Some(marker) => marker,
                None => value_js_wrapped(js, value, safe_ints)?.0,
            },
        };
    }
    let value = js.call(values.func, values.undefined, &argv[..args.len()])?;
    Ok(Framed::read(value, Some(frame)))
}

/// What a trampoline gave back: the JS value it returned, and the number it left in the
/// call frame (a function's result, an aggregate's running value), None when that is not
/// a number or the slots are not shared memory.
pub struct Framed {
    pub value: Raw,
    pub number: Option<f64>,
    /// When the trampoline said `value` is a string: its length in UTF-16 units, which
    /// the trampoline left in the frame.
    pub string_units: Option<usize>,
}

impl Framed {
    /// `value` with what the trampoline left in the frame about it (written last, after
    /// the user's function and any callback nested in it returned).
    pub fn read(value: Raw, frame: Option<&ResultSlots>) -> Self {
        let kind = frame.map_or(f64::from(group::RESULT_OTHER), |frame| {
            frame.get(slot::CALL_RESULT_TYPE)
        });
        let result = frame.map(|frame| frame.get(slot::CALL_RESULT));
        Framed {
            value,
            number: result.filter(|_| kind == f64::from(group::RESULT_NUMBER)),
            string_units: result
                .filter(|_| kind == f64::from(group::RESULT_STRING))
                .map(|units| units as usize),
        }
    }
}

fn write_state(js: Napi, frame: Option<&ResultSlots>, state: Option<(u32, u32)>) -> SResult<()> {
    let Some((state, flags)) = state else {
        return Ok(());
    };
    match frame {
        Some(frame) => {
            frame.put_i32(slot::CALL_STATE, state as i32);
            frame.put_i32(slot::CALL_FLAGS, flags as i32);
        }
        None => {
            slots::set(js, slot::CALL_STATE, f64::from(state))?;
            slots::set(js, slot::CALL_FLAGS, f64::from(flags))?;
        }
    }
    Ok(())
}

/// Argument `i` (below CALL_ARGS_MAX, so every write succeeds) in its frame slot, as the
/// marker the trampoline reads it by, or as a JS value.
#[inline]
fn framed_arg(js: Napi, frame: &ResultSlots, call: &FrameCall<'_>, i: usize, arg: &SqlValue) -> SResult<Raw> {
    let value = arg.get();
    match framed_number(frame, call.values, slot::CALL_ARGS + i, value, call.safe_ints) {
        Some(marker) => Ok(marker),
        None => Ok(value_js_wrapped(js, value, call.safe_ints)?.0),
    }
}

/// An INTEGER, REAL or NULL argument written to frame slot `at` (one that exists), as
/// the marker the trampoline reads it by; None for TEXT and BLOB, which travel as JS values.
#[inline]
fn framed_number(
    frame: &ResultSlots,
    values: &CallValues,
    at: usize,
    value: ValueRef<'_>,
    safe_ints: bool,
) -> Option<Raw> {
    Some(match value {
        ValueRef::Null => values.null,
        ValueRef::Integer(n) if safe_ints => {
            frame.put_i64(at, n);
            values.yes
        }
        ValueRef::Integer(n) => match i32::try_from(n) {
            Ok(small) => {
                frame.put_i32(at, small);
                values.no
            }
            Err(_) => {
                frame.put(at, n as f64);
                values.undefined
            }
        },
        ValueRef::Real(x) => {
            frame.put(at, x);
            values.undefined
        }
        ValueRef::Text(_) | ValueRef::Blob(_) => return None,
    })
}

/// One callback call as [`call_framed`] makes it: its arguments, the constants that
/// stand for them, and for an aggregate the group's number and the call's flags.
pub struct FrameCall<'a> {
    pub values: &'a CallValues,
    pub args: &'a [SqlValue],
    pub safe_ints: bool,
    pub state: Option<(u32, u32)>,
}

/// A callback's result: the number its trampoline left in the call frame, the string it
/// said it returned, else the JS value it returned, converted by [`set_result`].
pub fn frame_result(js: Napi, framed: Framed, out: &mut ResultSink, prefix: impl FnOnce() -> String) -> SResult<()> {
    if let Some(n) = framed.number {
        out.set(ValueRef::Real(n));
        return Ok(());
    }
    if let Some(units) = framed.string_units {
        // Read as a string only if it is one (Node-API refuses anything else, with no
        // exception thrown): any other value takes the general road.
        if let Ok(()) = set_text(&JsVal::string(js, framed.value), Some(units), out) {
            return Ok(());
        }
    }
    set_result(js, framed.value, out, prefix)
}

/// A string result (`units` long, when known): a long one SQLite keeps as it was written,
/// a short one it copies.
#[inline]
fn set_text(text: &JsVal, units: Option<usize>, out: &mut ResultSink) -> SResult<()> {
    match text.sqlite_text_to_keep(units)? {
        Some(bytes) => out.set_text_owned(bytes),
        None => out.set(ValueRef::Text(&text.sqlite_text()?)),
    }
    Ok(())
}
