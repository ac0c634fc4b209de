//! Queued aggregate calls. An aggregate's `step` and `inverse` give SQLite nothing back,
//! so a call whose arguments are numbers or NULL is written to a queue in the result
//! slots (`slot::QUEUE`) instead of crossing into JS; the queue is delivered, in order,
//! by one call of the JS layer's `deliver` (lib/database/call-frame.cjs) before any other
//! callback runs JS and before the step that queued it returns (`frames`), so no JS
//! runs between a queued call and its delivery. An aggregate's value call is delivered
//! with the queue, as its last entry, in the same JS call.
//!
//! Only a step that no callback runs inside, of a read-only statement, queues
//! (`frames::may_queue`): when a delivered call throws, SQLite had made no write
//! since, and the calls queued after it are dropped, as SQLite would never have made them.
//!
//! A window function queues two calls and delivers three per row, so the queue's state is
//! one thread-local of cells, each call reads its arguments once, and the JS values a
//! delivery passes are kept for as long as the step's shared handle scope lives.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rusqlite::types::ValueRef;

use crate::engine::callbacks::call::{report, Framed};
use crate::engine::callbacks::frames;
use crate::engine::callbacks::scope::{callback_scope, ScopeCache};
use crate::engine::js::protocol::{group, slot};
use crate::engine::js::result_slots as slots;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{JsRef, Napi, Raw, ResultSlots};
use crate::ffi::sqlite::create_function::SqlValue;

/// One aggregate registration's entry points for the queue: its `deliver` function (a
/// delivery runs the first queued call's) and its `run(word, id, at, types)`
/// (call-frame.cjs).
pub struct Runner {
    deliver: JsRef,
    run: JsRef,
    /// `deliver`, `run` and `undefined` as values of the current shared handle scope.
    saved: ScopeCache<[Raw; 3]>,
}

impl Runner {
    pub fn new(deliver: JsRef, run: JsRef) -> Runner {
        Runner {
            deliver,
            run,
            saved: ScopeCache::default(),
        }
    }

    /// `[deliver, run, undefined]`, read once per shared scope (`epoch`).
    #[inline]
    fn values(&self, js: Napi, epoch: Option<u64>) -> SResult<[Raw; 3]> {
        self.saved.get_or(epoch, || {
            Ok([self.deliver.get(js)?, self.run.get(js)?, js.undefined()?])
        })
    }
}

/// What a queued call does (`protocol::group`).
#[derive(Clone, Copy)]
pub enum Kind {
    Step = group::QUEUED_STEP as isize,
    Inverse = group::QUEUED_INVERSE as isize,
    Value = group::QUEUED_VALUE as isize,
}

/// The most queued calls, the most arguments a queued call has, and the most
/// registrations one delivery serves (`deliver`'s parameters).
const MAX_CALLS: i32 = 256;
const MAX_ARGS: usize = 8;
const MAX_RUNNERS: usize = group::QUEUE_RUNNERS;
/// The slots before a queued call's arguments.
const HEADER: usize = group::QUEUED_HEADER;

/// An argument's type in the queue (`protocol::group`).
const NULL: i32 = group::ARG_NULL as i32;
const INT32: i32 = group::ARG_INT32 as i32;
const DOUBLE: i32 = group::ARG_DOUBLE as i32;
const INT64: i32 = group::ARG_INT64 as i32;

type Runners = [Option<Rc<Runner>>; MAX_RUNNERS];
const NO_RUNNER: Option<Rc<Runner>> = None;

struct Queue {
    /// Whether calls are queued: read before every callback.
    queued: Cell<bool>,
    js: Cell<Option<Napi>>,
    db: Cell<u32>,
    calls: Cell<i32>,
    /// Slots used from `slot::QUEUE` on.
    used: Cell<usize>,
    /// The registrations the queued calls number, the first `runner_count` of them (the
    /// others are left from earlier deliveries, for the next ones to reuse, until the step
    /// ends).
    runners: RefCell<Runners>,
    runner_count: Cell<usize>,
    /// Whether `frames` was told how this thread delivers (once is enough).
    told: Cell<bool>,
}

thread_local! {
    static QUEUE: Queue = const {
        Queue {
            queued: Cell::new(false),
            js: Cell::new(None),
            db: Cell::new(0),
            calls: Cell::new(0),
            used: Cell::new(0),
            runners: RefCell::new([NO_RUNNER; MAX_RUNNERS]),
            runner_count: Cell::new(0),
            told: Cell::new(false),
        }
    };
}

/// One call to queue.
struct Call<'a> {
    js: Napi,
    db: u32,
    runner: &'a Rc<Runner>,
    kind: Kind,
    state: u32,
    flags: u32,
    args: &'a [SqlValue],
    safe_ints: bool,
}

/// What queueing a call did.
enum Pushed {
    /// Queued: how many calls are queued now.
    Queued(i32),
    /// It does not fit in the queue as it is.
    Full,
    /// It may not be queued (an argument that is no number, a callback running, ...).
    Refused,
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
    let call = Call {
        js,
        db,
        runner,
        kind,
        state,
        flags,
        args,
        safe_ints,
    };
    match push(&call) {
        Pushed::Queued(_) => Ok(true),
        other => not_queued(&call, other),
    }
}

/// A call that did not fit (queued after a delivery when it then does) or may not be
/// queued (the queue is delivered before it runs).
#[cold]
#[inline(never)]
fn not_queued(call: &Call<'_>, pushed: Pushed) -> SResult<bool> {
    deliver(call.js)?;
    if let Pushed::Full = pushed {
        if let Pushed::Queued(_) = push(call) {
            return Ok(true);
        }
        deliver(call.js)?;
    }
    Ok(false)
}

fn push(call: &Call<'_>) -> Pushed {
    if call.args.len() > MAX_ARGS {
        return Pushed::Refused;
    }
    slots::with_shared(|frame| match frame {
        Some(frame) => QUEUE.with(|queue| {
            // Calls held in the queue prove that this is the step that queued them, run
            // with no JS since: every callback that runs JS, and the step's end, deliver
            // them first. Only an empty queue needs asking.
            if !queue.queued.get() && !frames::may_queue() {
                return Pushed::Refused;
            }
            queue.push(frame, call)
        }),
        None => Pushed::Refused,
    })
}

impl Queue {
    fn push(&self, frame: &ResultSlots, call: &Call<'_>) -> Pushed {
        let (used, calls) = (self.used.get(), self.calls.get());
        let argc = call.args.len();
        if calls >= MAX_CALLS || used + HEADER + argc > slot::QUEUE_SLOTS {
            return Pushed::Full;
        }
        let count = self.runner_count.get();
        let index = {
            let runners = self.runners.borrow();
            runners[..count]
                .iter()
                .position(|r| r.as_ref().is_some_and(|r| Rc::ptr_eq(r, call.runner)))
        };
        let index = match index {
            Some(index) => index,
            None if count < MAX_RUNNERS => count,
            None => return Pushed::Full,
        };
        let at = slot::QUEUE + used;
        let mut types = 0;
        for (i, arg) in call.args.iter().enumerate() {
            let slot = at + HEADER + i;
            let t = match arg.get() {
                ValueRef::Integer(n) if call.safe_ints => {
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
                ValueRef::Null => NULL,
                // What was written past the queue's end is not read.
                ValueRef::Text(_) | ValueRef::Blob(_) => return Pushed::Refused,
            };
            types |= t << (group::ARG_TYPE_BITS as usize * i);
        }
        if index == count {
            let mut runners = self.runners.borrow_mut();
            if !runners[index].as_ref().is_some_and(|r| Rc::ptr_eq(r, call.runner)) {
                runners[index] = Some(Rc::clone(call.runner));
            }
            self.runner_count.set(count + 1);
        }
        let word = call.flags as i32
            | (call.kind as i32) << group::QUEUED_KIND_SHIFT
            | (argc as i32) << group::QUEUED_ARGC_SHIFT;
        frame.put_i32_pair(at, index as i32, call.state as i32);
        frame.put_i32_pair(at + 1, word, types);
        let calls = calls + 1;
        frame.put_i32(slot::QUEUE_LEN, calls);
        self.used.set(used + HEADER + argc);
        self.calls.set(calls);
        self.js.set(Some(call.js));
        self.db.set(call.db);
        self.queued.set(true);
        if !self.told.replace(true) {
            frames::set_deliverer(deliver_at_step_end);
        }
        Pushed::Queued(calls)
    }
}

/// Delivers the queued calls, if any, before JS runs for anything else.
#[inline]
pub fn deliver(js: Napi) -> SResult<()> {
    if QUEUE.with(|queue| queue.queued.get()) {
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
    let call = Call {
        js,
        db,
        runner,
        kind: Kind::Value,
        state,
        flags,
        args: &[],
        safe_ints: false,
    };
    // One access to the queue for the call and the delivery. The step need not be one that
    // queues (`frames::may_queue`): this call is not left for later, it runs now,
    // after the calls queued before it, as it would after their delivery.
    let taken = slots::with_shared(|frame| {
        let frame = frame?;
        QUEUE.with(|queue| {
            if !queue.queued.get() {
                return None;
            }
            Some(match queue.push(frame, &call) {
                Pushed::Queued(calls) => Some((calls, queue.take())),
                Pushed::Full | Pushed::Refused => None,
            })
        })
    });
    let (calls, taken) = match taken {
        None => return Ok(WithValue::NotQueued),
        Some(None) => {
            deliver(js)?;
            return Ok(WithValue::NotQueued);
        }
        Some(Some(taken)) => taken,
    };
    match run_taken(js, taken) {
        Ok(Some(value)) => Ok(WithValue::Value(value)),
        Ok(None) => Ok(WithValue::NotQueued),
        // `deliver` leaves the index of the call that threw in QUEUE_LEN.
        Err(error) if failed_at() == calls - 1 => Ok(WithValue::Failed(error)),
        Err(error) => Err(error),
    }
}

/// Which queued call threw in the last delivery (-1 when unknown).
fn failed_at() -> i32 {
    slots::with_shared(|frame| frame.map_or(-1, |frame| frame.get_i32(slot::QUEUE_LEN)))
}

/// The step's last delivery (`frames::StepFrame::finish`).
fn deliver_at_step_end() -> bool {
    let Some(js) = QUEUE.with(|queue| queue.js.get()) else {
        return true;
    };
    let delivered = match deliver(js) {
        Ok(()) => true,
        Err(error) => {
            report(js, error);
            false
        }
    };
    // The registrations kept for the step's deliveries are let go with it.
    let left = QUEUE.with(|queue| std::mem::replace(&mut *queue.runners.borrow_mut(), [NO_RUNNER; MAX_RUNNERS]));
    drop(left);
    delivered
}

/// What a delivery takes from the queue, which is empty again before any JS runs.
struct Taken {
    db: u32,
    calls: i32,
    count: usize,
}

impl Queue {
    fn take(&self) -> Taken {
        self.queued.set(false);
        self.used.set(0);
        Taken {
            db: self.db.get(),
            calls: self.calls.replace(0),
            count: self.runner_count.replace(0),
        }
    }
}

/// Runs every queued call in JS, in order: the result of the last when it is a value
/// call. A throw drops the calls after it and fails the step that queued them.
fn run_queue(js: Napi) -> SResult<Option<Framed>> {
    run_taken(js, QUEUE.with(Queue::take))
}

fn run_taken(js: Napi, taken: Taken) -> SResult<Option<Framed>> {
    if taken.calls == 0 {
        return Ok(None);
    }
    let delivered = call_deliver(js, taken.db, taken.count);
    if delivered.is_err() {
        frames::delivery_failed();
    }
    delivered.map(Some)
}

/// Calls `deliver` with the `run` of the first `count` runners.
fn call_deliver(js: Napi, db: u32, count: usize) -> SResult<Framed> {
    let (scope, _running) = callback_scope(js, db)?;
    let epoch = scope.epoch();
    let (deliver, undefined, argv) = QUEUE.with(|queue| {
        let runners = queue.runners.borrow();
        let mut runners = runners[..count].iter().flatten();
        let Some(first) = runners.next() else {
            return Err(StoreError::error(
                "triflux-native-store: queued calls without their function",
            ));
        };
        let [deliver, run, undefined] = first.values(js, epoch)?;
        let mut argv: [Raw; MAX_RUNNERS] = [run, undefined, undefined, undefined];
        for (slot, runner) in argv.iter_mut().skip(1).zip(runners) {
            *slot = runner.values(js, epoch)?[1];
        }
        Ok((deliver, undefined, argv))
    })?;
    let value = js.call(deliver, undefined, &argv[..count])?;
    Ok(slots::with_shared(|frame| Framed::read(value, frame)))
}
