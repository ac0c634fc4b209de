//! Queued aggregate calls. An aggregate's `step` and `inverse` give SQLite nothing back,
//! so a call whose arguments are numbers or NULL is written to a queue in the result
//! slots (`slots::QUEUE`) instead of crossing into JS; the queue is delivered, in order,
//! by one call of the JS layer's `deliver` (lib/database/call-frame.cjs) before any other
//! callback runs JS and before the step that queued it returns (`step_frames`), so no JS
//! runs between a queued call and its delivery. An aggregate's value call is delivered
//! with the queue, as its last entry, in the same JS call.
//!
//! Only a step that no callback runs inside, of a read-only statement, queues
//! (`step_frames::may_queue`): when a delivered call throws, SQLite had made no write
//! since, and the calls queued after it are dropped, as SQLite would never have made them.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rusqlite::types::ValueRef;
use smallvec::SmallVec;

use crate::error::{SResult, StoreError};
use crate::js::callbacks::{report, Framed};
use crate::js::napi::{JsRef, Napi};
use crate::js::slots;
use crate::sqlite::raw::functions::SqlValue;
use crate::sqlite::step_frames;

/// One aggregate registration's entry points for the queue: the thread's `deliver`
/// function and the registration's `run(kind, flags, id, at, argc, types)`.
pub struct Runner {
    pub deliver: JsRef,
    pub run: JsRef,
}

/// What a queued call does (twins in lib/database/call-frame.cjs).
#[derive(Clone, Copy)]
pub enum Kind {
    Step = 0,
    Inverse = 1,
    Value = 2,
}

/// The most queued calls, the most arguments a queued call has, and the most
/// registrations one delivery serves (`deliver`'s parameters).
const MAX_CALLS: i32 = 256;
const MAX_ARGS: usize = 8;
const MAX_RUNNERS: usize = 4;

/// An argument's type in the queue (2 bits each, twins in call-frame.cjs).
const NULL: i32 = 0;
const INT32: i32 = 1;
const DOUBLE: i32 = 2;
const INT64: i32 = 3;

struct Queue {
    js: Option<Napi>,
    db: u32,
    calls: i32,
    /// Slots used from `slots::QUEUE` on.
    used: usize,
    runners: Vec<Rc<Runner>>,
}

thread_local! {
    static QUEUE: RefCell<Queue> = const {
        RefCell::new(Queue { js: None, db: 0, calls: 0, used: 0, runners: Vec::new() })
    };
    /// Whether calls are queued: read before every callback, so kept apart from the queue.
    static QUEUED: Cell<bool> = const { Cell::new(false) };
}

/// Queues a call of `runner` (of connection `db`) when it may be: Ok(true) when queued,
/// Ok(false) when it must run now (the queue is then delivered: run it after this).
#[allow(clippy::too_many_arguments)]
pub fn try_queue(
    js: Napi,
    db: u32,
    runner: &Rc<Runner>,
    kind: Kind,
    state: u32,
    flags: u32,
    args: &[SqlValue],
    safe_ints: bool,
) -> SResult<bool> {
    let queueable = args.len() <= MAX_ARGS
        && args
            .iter()
            .all(|arg| matches!(arg.get(), ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_)))
        && step_frames::may_queue();
    if !queueable {
        deliver(js)?;
        return Ok(false);
    }
    if !has_room(runner, args.len()) {
        deliver(js)?;
    }
    let queued = slots::with_shared(|frame| {
        let Some(frame) = frame else {
            return false;
        };
        QUEUE.with(|queue| {
            let mut queue = queue.borrow_mut();
            let index = match queue.runners.iter().position(|r| Rc::ptr_eq(r, runner)) {
                Some(index) => index,
                None => {
                    queue.runners.push(Rc::clone(runner));
                    queue.runners.len() - 1
                }
            };
            let at = slots::QUEUE + queue.used;
            let mut types = 0;
            for (i, arg) in args.iter().enumerate() {
                let slot = at + 2 + i;
                let t = match arg.get() {
                    ValueRef::Integer(n) if safe_ints => {
                        frame.put_i64(slot, n);
                        INT64
                    }
                    ValueRef::Integer(n) => match i32::try_from(n) {
                        Ok(small) => {
                            frame.put_i32(slot, small);
                            INT32
                        }
                        Err(_) => {
                            frame.put(slot, n as f64);
                            DOUBLE
                        }
                    },
                    ValueRef::Real(x) => {
                        frame.put(slot, x);
                        DOUBLE
                    }
                    _ => NULL,
                };
                types |= t << (2 * i);
            }
            let word = flags as i32 | (kind as i32) << 8 | (args.len() as i32) << 16;
            frame.put_i32_pair(at, index as i32, state as i32);
            frame.put_i32_pair(at + 1, word, types);
            queue.used += 2 + args.len();
            queue.calls += 1;
            queue.js = Some(js);
            queue.db = db;
            true
        })
    });
    if queued {
        QUEUED.with(|q| q.set(true));
        step_frames::set_deliverer(deliver_at_step_end);
    }
    Ok(queued)
}

/// Whether a call of `runner` with `argc` arguments fits in the queue as it is.
fn has_room(runner: &Rc<Runner>, argc: usize) -> bool {
    QUEUE.with(|queue| {
        let queue = queue.borrow();
        queue.calls < MAX_CALLS
            && queue.used + 2 + argc <= slots::QUEUE_SLOTS
            && (queue.runners.len() < MAX_RUNNERS || queue.runners.iter().any(|r| Rc::ptr_eq(r, runner)))
    })
}

/// Delivers the queued calls, if any, before JS runs for anything else.
#[inline]
pub fn deliver(js: Napi) -> SResult<()> {
    if QUEUED.with(|q| q.get()) {
        run_queue(js)?;
    }
    Ok(())
}

/// What delivering the queue with a value call gave.
pub enum WithValue {
    /// Nothing was queued, or the call did not fit (the queue is delivered then): make
    /// the call after this.
    NotQueued,
    /// The value call's result.
    Value(Framed),
    /// The value call itself threw (every queued call before it ran).
    Failed(StoreError),
}

/// Queues the value call of `runner` and delivers the queue with it; an error when a
/// queued call before it threw (the value call was dropped).
pub fn deliver_with_value(js: Napi, db: u32, runner: &Rc<Runner>, state: u32, flags: u32) -> SResult<WithValue> {
    if !QUEUED.with(|q| q.get()) {
        return Ok(WithValue::NotQueued);
    }
    if !has_room(runner, 0) || !try_queue(js, db, runner, Kind::Value, state, flags, &[], false)? {
        deliver(js)?;
        return Ok(WithValue::NotQueued);
    }
    let calls = QUEUE.with(|queue| queue.borrow().calls);
    match run_queue(js) {
        Ok(Some(value)) => Ok(WithValue::Value(value)),
        Ok(None) => Ok(WithValue::NotQueued),
        // `deliver` leaves the index of the call that threw in QUEUE_LEN.
        Err(error) if failed_at() == calls - 1 => Ok(WithValue::Failed(error)),
        Err(error) => Err(error),
    }
}

/// Which queued call threw in the last delivery (-1 when unknown).
fn failed_at() -> i32 {
    slots::with_shared(|frame| frame.map_or(-1, |frame| frame.get_i32(slots::QUEUE_LEN)))
}

/// The step's last delivery (`step_frames::StepFrame::finish`).
fn deliver_at_step_end() -> bool {
    let Some(js) = QUEUE.with(|queue| queue.borrow().js) else {
        return true;
    };
    match deliver(js) {
        Ok(()) => true,
        Err(error) => {
            report(js, error);
            false
        }
    }
}

/// Runs every queued call in JS, in order: the result of the last when it is a value
/// call. A throw drops the calls after it and fails the step that queued them.
fn run_queue(js: Napi) -> SResult<Option<Framed>> {
    QUEUED.with(|q| q.set(false));
    let (db, calls, runners) = QUEUE.with(|queue| {
        let mut queue = queue.borrow_mut();
        queue.used = 0;
        let calls = std::mem::take(&mut queue.calls);
        (queue.db, calls, std::mem::take(&mut queue.runners))
    });
    if calls == 0 {
        return Ok(None);
    }
    let delivered = call_deliver(js, db, calls, &runners);
    if delivered.is_err() {
        step_frames::delivery_failed();
    }
    delivered.map(Some)
}

fn call_deliver(js: Napi, db: u32, calls: i32, runners: &[Rc<Runner>]) -> SResult<Framed> {
    slots::with_shared(|frame| frame.map(|frame| frame.put_i32(slots::QUEUE_LEN, calls)));
    let (_scope, _running) = js.callback_scope(db)?;
    let mut argv: SmallVec<[_; MAX_RUNNERS]> = SmallVec::new();
    for runner in runners {
        argv.push(runner.run.get(js)?);
    }
    let deliver = runners[0].deliver.get(js)?;
    let value = js.call(deliver, js.undefined()?, &argv)?;
    let number = slots::with_shared(|frame| {
        frame
            .filter(|frame| frame.get(slots::CALL_RESULT_IS_NUMBER) == 1.0)
            .map(|frame| frame.get(slots::CALL_RESULT))
    });
    Ok(Framed { value, number })
}
