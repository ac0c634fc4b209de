//! `db.function()` and `db.aggregate()`: JS functions registered as SQL functions, run by
//! SQLite inside a statement step, on the JS thread. The checks and defaults are the JS
//! layer's (lib/database/functions.cjs); what happens per call is better-sqlite3's
//! `CustomFunction` / `CustomAggregate`: a throw in JS stays the pending exception, which
//! the statement call then throws as it is.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::engine::callbacks::call::{
    call_framed, call_scalar, frame_result, report, with_failure_set_aside, FrameCall, Framed, Registered,
};
use crate::engine::callbacks::queue::{self as batch, Kind, Runner, WithValue};
use crate::engine::callbacks::scope::{callback_scope, lent_callback_scope, CallValues, ScopeCache};
use crate::engine::js::protocol::group::{GROUP_FINAL, GROUP_NEW, GROUP_RELEASE};
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{JsRef, Napi};

use crate::ffi::sqlite::create_function::{
    create_aggregate, create_scalar, AggregateFunction, FunctionFlags, ResultSink, ScalarFunction, SqlValue,
};

/// A registered name as V8's `String::Utf8Value` gives it to SQLite, and as text for
/// the callback's error messages.
fn name_of(name: &JsVal) -> SResult<(Vec<u8>, String)> {
    let bytes = name.sqlite_text()?.to_vec();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok((bytes, text))
}

struct JsFunction {
    js: Napi,
    /// The connection's handle (busy while this runs).
    db: u32,
    _registered: Registered,
    /// The JS layer's trampoline for the user's function: it reads the arguments from the
    /// call frame and leaves a number result there (see `frame_args`).
    f: JsRef,
    saved: ScopeCache,
    name: String,
    safe_ints: bool,
}

impl JsFunction {
    fn run(&self, args: &[SqlValue], out: &mut ResultSink) -> SResult<()> {
        let js = self.js;
        // Queued aggregate calls run first: they came first.
        batch::deliver(js)?;
        let (scope, _running) = match lent_callback_scope(js, self.db) {
            Some(entered) => entered,
            None => callback_scope(js, self.db)?,
        };
        let values = self.saved.get(js, &scope, &self.f)?;
        let result = match call_scalar(js, &values, args, self.safe_ints) {
            Some(result) => result?,
            None => {
                let call = FrameCall {
                    values: &values,
                    args,
                    safe_ints: self.safe_ints,
                    state: None,
                };
                call_framed(js, &call)?
            }
        };
        frame_result(js, result, out, || {
            format!("User-defined function {}() returned", self.name)
        })
    }
}

impl ScalarFunction for JsFunction {
    fn call(&self, args: &[SqlValue], out: &mut ResultSink) {
        if let Err(error) = self.run(args, out) {
            report(self.js, error);
            out.fail(b"");
        }
    }
}

/// Registers `db.function(name, options, fn)` on `conn` (the connection of handle `db`):
/// `f` is the JS layer's trampoline, `argc` -1 for varargs.
#[allow(clippy::too_many_arguments)]
pub fn register_function(
    js: Napi,
    conn: &Connection,
    db: u32,
    f: JsVal,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    flags: FunctionFlags,
) -> SResult<()> {
    let (bytes, name) = name_of(&name)?;
    let imp = JsFunction {
        js,
        db,
        _registered: Registered::new(js),
        f: js.keep(f.raw())?,
        saved: ScopeCache::default(),
        name,
        safe_ints,
    };
    create_scalar(conn, &bytes, argc, flags, imp)
}

/// The running values' numbers: each group in progress has one, reused once its group
/// ends (the JS layer keeps the values in an array under these numbers).
#[derive(Default)]
struct StateIds {
    free: RefCell<Vec<u32>>,
    next: Cell<u32>,
}

impl StateIds {
    fn take(&self) -> u32 {
        self.free.borrow_mut().pop().unwrap_or_else(|| {
            let id = self.next.get();
            self.next.set(id + 1);
            id
        })
    }

    fn give_back(&self, id: u32) {
        self.free.borrow_mut().push(id);
    }
}

struct JsAggregate {
    js: Napi,
    /// The connection's handle (busy while this runs).
    db: u32,
    _registered: Registered,
    /// The JS layer's trampolines: `step` and `inverse` call the user's with the group's
    /// running value and keep what they return; `value` gives the result (the user's
    /// `result`, if any, of the running value) or only drops the value (RELEASE). The
    /// running value, and `start`, live on the JS side.
    step: JsRef,
    saved_step: ScopeCache,
    inverse: Option<JsRef>,
    saved_inverse: ScopeCache,
    value: JsRef,
    saved_value: ScopeCache,
    /// `step`, `inverse` and `value` as the queue calls them (`callbacks::queue`).
    runner: Rc<Runner>,
    /// Whether the user gave `result`: without one, a running value that is a number
    /// (which the step trampolines leave in the call frame) is the result as it is.
    has_result: bool,
    ids: StateIds,
    name: String,
    safe_ints: bool,
}

/// Why an aggregate call failed: its own callback (or Rust's conversion of its result),
/// or a queued call delivered before it (see [`JsAggregate::undelivered`]).
enum Failed {
    Own(StoreError),
    Before(StoreError),
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Self {
        Failed::Own(error)
    }
}

/// One group's running value, by its number; `id` None once a callback failed
/// (better-sqlite3's empty accumulator: the group's later callbacks do nothing).
struct Group {
    id: Option<u32>,
    /// No callback of the group has returned yet: its value is still to be made.
    new: bool,
    is_window: bool,
    /// The running value after the last step, when it is a number and there is no
    /// `result`: xValue and xFinal then need no JS call (better-sqlite3 calls none either).
    number: Option<f64>,
}

impl JsAggregate {
    fn prefix(&self) -> String {
        format!("User-defined function {}() returned", self.name)
    }

    /// better-sqlite3's `GetAccumulator`: the group's number and whether its value is
    /// still to be made (from `start`, by the trampoline, on its first callback).
    fn state(&self, group: &mut Option<Group>) -> Option<(u32, bool)> {
        let group = group.get_or_insert_with(|| Group {
            id: Some(self.ids.take()),
            new: true,
            is_window: false,
            number: None,
        });
        group.id.map(|id| (id, group.new))
    }

    fn fail(&self, group: &mut Option<Group>, error: StoreError, out: &mut ResultSink) {
        // A JS throw leaves the trampoline having dropped the value; a failure of Rust's
        // own (a result of the wrong type) drops it now, before the error is thrown.
        let release = !matches!(error, StoreError::Pending);
        self.end(group, release);
        report(self.js, error);
        out.fail(b"");
    }

    /// A queued call delivered before this one threw: SQLite would have stopped before
    /// making this call, so it fails without running, and a group it would have begun
    /// never existed (SQLite's final call for it runs nothing).
    fn undelivered(&self, group: &mut Option<Group>, error: StoreError, out: &mut ResultSink) {
        if group.as_ref().is_some_and(|g| g.new) {
            self.end(group, false);
        }
        report(self.js, error);
        out.fail(b"");
    }

    fn run_step(&self, group: &mut Option<Group>, args: &[SqlValue], inverse: bool) -> std::result::Result<(), Failed> {
        let js = self.js;
        let Some((id, new)) = self.state(group) else {
            return Ok(());
        };
        let flags = if new { GROUP_NEW } else { 0 };
        let kind = if inverse && self.inverse.is_some() {
            Kind::Inverse
        } else {
            Kind::Step
        };
        if batch::try_queue(js, self.db, &self.runner, kind, id, flags, args, self.safe_ints).map_err(Failed::Before)? {
            if let Some(group) = group {
                group.new = false;
                // Known again only from a value call (which delivers the queue with it).
                group.number = None;
            }
            return Ok(());
        }
        self.step_now(group, args, kind, id, flags)
    }

    /// A step that is not queued: it runs now (after the queue's delivery).
    #[inline(never)]
    fn step_now(
        &self,
        group: &mut Option<Group>,
        args: &[SqlValue],
        kind: Kind,
        id: u32,
        flags: u32,
    ) -> std::result::Result<(), Failed> {
        let js = self.js;
        let (scope, _running) = callback_scope(js, self.db)?;
        let values = match kind {
            Kind::Inverse => match &self.inverse {
                Some(inverse) => self.saved_inverse.get(js, &scope, inverse)?,
                None => self.saved_step.get(js, &scope, &self.step)?,
            },
            _ => self.saved_step.get(js, &scope, &self.step)?,
        };
        let call = FrameCall {
            values: &values,
            args,
            safe_ints: self.safe_ints,
            state: Some((id, flags)),
        };
        let stepped = call_framed(js, &call)?;
        if let Some(group) = group {
            group.new = false;
            group.number = if self.has_result { None } else { stepped.number };
        }
        Ok(())
    }

    fn run_value(
        &self,
        group: &mut Option<Group>,
        is_final: bool,
        out: &mut ResultSink,
    ) -> std::result::Result<(), Failed> {
        let js = self.js;
        let Some((id, new)) = self.state(group) else {
            return Ok(());
        };
        let Some(state) = group.as_mut() else {
            return Ok(());
        };
        let mut flags = if new { GROUP_NEW } else { 0 };
        let was_window = state.is_window;
        if !is_final {
            state.is_window = true;
        } else if state.is_window {
            // A window function's last call only ends the group (a number needs no
            // dropping).
            if state.number.is_some() {
                return Ok(());
            }
            flags = GROUP_RELEASE;
        } else {
            flags |= GROUP_FINAL;
        }
        if let Some(n) = state.number {
            // The running value is the result; after the final call the number stays in
            // the JS array until the group's number is reused, which holds nothing.
            out.set(ValueRef::Real(n));
            return Ok(());
        }
        // Queued calls run first, and this one with them when it fits.
        match batch::deliver_with_value(js, self.db, &self.runner, id, flags) {
            // The usual case (a window's value after its row's steps), kept short.
            Ok(WithValue::Value(value)) => {
                state.new = false;
                match value.number {
                    _ if flags == GROUP_RELEASE => Ok(()),
                    Some(n) => {
                        out.set(ValueRef::Real(n));
                        Ok(())
                    }
                    None => Ok(frame_result(js, value, out, || self.prefix())?),
                }
            }
            delivered => self.value_otherwise(state, id, new, flags, was_window, delivered, out),
        }
    }

    /// A value call that was not delivered with the queue, or whose delivery failed.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn value_otherwise(
        &self,
        state: &mut Group,
        id: u32,
        new: bool,
        flags: u32,
        was_window: bool,
        delivered: SResult<WithValue>,
        out: &mut ResultSink,
    ) -> std::result::Result<(), Failed> {
        let js = self.js;
        let delivered = match delivered {
            Ok(WithValue::Value(value)) => Ok(Some(value)),
            Ok(WithValue::NotQueued) => Ok(None),
            // This call's own throw (after every queued call ran).
            Ok(WithValue::Failed(error)) => return Err(Failed::Own(error)),
            // A failure of Rust's own (not a JS throw) is no queued throw: it is this call's.
            Err(error) if !matches!(error, StoreError::Pending) => return Err(Failed::Own(error)),
            Err(error) => Err(error),
        };
        let cleanup = flags & GROUP_FINAL != 0;
        let value = match delivered {
            Ok(Some(value)) => value,
            Ok(None) if !cleanup => self.call_value(id, flags)?,
            Err(error) if !cleanup || new || !matches!(error, StoreError::Pending) => {
                state.is_window = was_window;
                return Err(Failed::Before(error));
            }
            // A final call: SQLite also makes it for the groups in progress when a
            // callback's throw (maybe one just delivered) stopped the statement.
            other => {
                let undelivered = other.is_err();
                if let Err(error) = other {
                    report(js, error);
                }
                with_failure_set_aside(js, || {
                    let value = self.call_value(id, flags)?;
                    frame_result(js, value, out, || self.prefix())
                })?;
                state.new = false;
                if undelivered {
                    // The statement stops with the queued call's throw.
                    out.fail(b"");
                }
                return Ok(());
            }
        };
        state.new = false;
        if flags == GROUP_RELEASE {
            return Ok(());
        }
        Ok(frame_result(js, value, out, || self.prefix())?)
    }

    fn call_value(&self, id: u32, flags: u32) -> SResult<Framed> {
        let js = self.js;
        let (scope, _running) = callback_scope(js, self.db)?;
        let values = self.saved_value.get(js, &scope, &self.value)?;
        let call = FrameCall {
            values: &values,
            args: &[],
            safe_ints: false,
            state: Some((id, flags)),
        };
        call_framed(js, &call)
    }

    /// Ends the group: its number is free again; with `release`, the trampoline drops
    /// its value first (where it did not already).
    fn end(&self, group: &mut Option<Group>, release: bool) {
        let Some(id) = group.as_mut().and_then(|g| g.id.take()) else {
            return;
        };
        if release {
            let js = self.js;
            let dropped = js.scope().and_then(|_scope| {
                let values = CallValues::new(js, &self.value)?;
                let call = FrameCall {
                    values: &values,
                    args: &[],
                    safe_ints: false,
                    state: Some((id, GROUP_RELEASE)),
                };
                call_framed(js, &call)
            });
            // Unreachable JS (an exception pending) keeps the value until the number is reused.
            drop(dropped);
        }
        self.ids.give_back(id);
    }
}

impl AggregateFunction for JsAggregate {
    type State = Group;

    fn step(&self, group: &mut Option<Group>, args: &[SqlValue], inverse: bool, out: &mut ResultSink) {
        match self.run_step(group, args, inverse) {
            Ok(()) => {}
            Err(Failed::Own(error)) => self.fail(group, error, out),
            Err(Failed::Before(error)) => self.undelivered(group, error, out),
        }
    }

    fn value(&self, group: &mut Option<Group>, is_final: bool, out: &mut ResultSink) {
        match self.run_value(group, is_final, out) {
            Ok(()) => {}
            Err(Failed::Own(error)) => self.fail(group, error, out),
            Err(Failed::Before(error)) => self.undelivered(group, error, out),
        }
        if is_final {
            // The final call dropped the value (or failed, which drops it too).
            self.end(group, false);
        }
    }
}

/// The JS layer's trampolines of one aggregate: `inverse` a function or null; `run` the
/// three as the queue calls them, `deliver` the thread's delivery of the queue.
pub struct AggregateTrampolines {
    pub step: JsVal,
    pub inverse: JsVal,
    pub value: JsVal,
    pub run: JsVal,
    pub deliver: JsVal,
}

/// Registers `db.aggregate(name, options)` on `conn` (the connection of handle `db`):
/// whether the user gave `result`, `argc` -1 for varargs; a window function when
/// `inverse` is given.
#[allow(clippy::too_many_arguments)]
pub fn register_aggregate(
    js: Napi,
    conn: &Connection,
    db: u32,
    trampolines: AggregateTrampolines,
    has_result: bool,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    flags: FunctionFlags,
) -> SResult<()> {
    let AggregateTrampolines {
        step,
        inverse,
        value,
        run,
        deliver,
    } = trampolines;
    {
        let (bytes, name) = name_of(&name)?;
        let inverse = if inverse.is_function() {
            Some(js.keep(inverse.raw())?)
        } else {
            None
        };
        let window = inverse.is_some();
        let imp = JsAggregate {
            js,
            db,
            _registered: Registered::new(js),
            step: js.keep(step.raw())?,
            saved_step: ScopeCache::default(),
            inverse,
            saved_inverse: ScopeCache::default(),
            value: js.keep(value.raw())?,
            saved_value: ScopeCache::default(),
            runner: Rc::new(Runner::new(js.keep(deliver.raw())?, js.keep(run.raw())?)),
            has_result,
            ids: StateIds::default(),
            name,
            safe_ints,
        };
        create_aggregate(conn, &bytes, argc, flags, window, imp)
    }
}
