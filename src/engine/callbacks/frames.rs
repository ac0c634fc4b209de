//! What a statement step lends the callbacks SQLite runs inside it: each `sqlite3_step`
//! is a frame, and a callback run directly by that step (not by a statement it called
//! itself) may leave one resource in the frame, dropped when the step returns. The JS
//! layer keeps one handle scope there for a whole batch of callbacks instead of one per
//! callback. Frames nest as steps do (a callback that runs a statement of its own).
//!
//! A step of a read-only statement that no callback runs inside may also have calls
//! queued for delivery later (`callbacks::queue`: an aggregate's steps, which return nothing to
//! SQLite); the queue's owner registers how it delivers them ([`set_deliverer`]), and the
//! step delivers what is left before it returns ([`StepFrame::finish`]).

use std::any::Any;
use std::cell::RefCell;

struct Frame {
    /// How many callbacks were running when the step began: the callbacks it runs
    /// itself start at this depth.
    depth: u32,
    lent: Option<StepResource>,
    /// Whether callbacks run directly by this step may have their calls queued.
    queueable: bool,
    /// How many of its callbacks left their values in the caller's own scope (see
    /// [`enter_bare`]), and the epoch they share (0 until the first).
    bare: u32,
    bare_epoch: u64,
}

/// What a callback leaves in its step's frame: a resource dropped with the step, and
/// the counters its owner reads on each callback without reaching into the resource.
pub struct StepResource {
    /// Who lent it (the JS layer's environment), as a number.
    pub owner: usize,
    /// How many callbacks have used it.
    pub used: u32,
    /// Unique among the thread's resources, for as long as this one lives.
    pub epoch: u64,
    /// Only ever dropped (with the step, or when its owner replaces it).
    #[allow(dead_code)]
    pub resource: Box<dyn Any>,
}

struct State {
    frames: Vec<Frame>,
    /// The connections (by handle) whose user callback is running on this thread,
    /// innermost last.
    running: Vec<u32>,
    /// Whether a delivery failed during the innermost step that queues (SQLite may have
    /// ignored the callback that reported it, e.g. a final call while the statement halts).
    delivery_failed: bool,
    /// How queued calls are delivered: false when one of them failed (its error pending).
    deliverer: Option<fn() -> bool>,
    /// The next epoch (`StepResource::epoch`, a step's bare epoch): unique on this thread.
    next_epoch: u64,
    /// How many user callbacks are registered on this thread's connections: while none
    /// is, a step can run none, and enters no frame.
    registered: u32,
}

thread_local! {
    // One thread-local for all: each access costs a lookup in a loaded library.
    static STATE: RefCell<State> = const {
        RefCell::new(State {
            frames: Vec::new(),
            running: Vec::new(),
            delivery_failed: false,
            deliverer: None,
            next_epoch: 1,
            registered: 0,
        })
    };
}

fn depth(state: &State) -> u32 {
    u32::try_from(state.running.len()).unwrap_or(u32::MAX)
}

/// Counts user callbacks registered (`delta` 1) or released by SQLite (-1) on this
/// thread; the count after.
pub fn count_registered(delta: i32) -> u32 {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        state.registered = state.registered.saturating_add_signed(delta);
        state.registered
    })
}

/// One step in progress: its resource is dropped with it, on every exit path. A step
/// on a thread with no callback registered enters nothing (it runs no callback) and
/// costs one look at the thread's state.
pub struct StepFrame {
    entered: bool,
}

impl StepFrame {
    /// Enters a step; `read_only` tells whether its statement writes nothing, so that a
    /// call queued in it and delivered later cannot be observed through a write made
    /// meanwhile (asked only when a frame is entered).
    pub fn enter(read_only: impl FnOnce() -> bool) -> StepFrame {
        let entered = STATE.with(|state| {
            let mut state = state.borrow_mut();
            if state.registered == 0 {
                return false;
            }
            let depth = depth(&state);
            let queueable = depth == 0 && read_only();
            if queueable {
                state.delivery_failed = false;
            }
            state.frames.push(Frame {
                depth,
                lent: None,
                queueable,
                bare: 0,
                bare_epoch: 0,
            });
            true
        });
        StepFrame { entered }
    }

    /// Delivers the calls still queued before the step returns: false when a queued call
    /// (here or in a callback SQLite ran meanwhile) failed, which is then the step's
    /// failure, its error pending.
    pub fn finish(&self) -> bool {
        if !self.entered {
            return true;
        }
        let (queueable, deliverer) = STATE.with(|state| {
            let state = state.borrow();
            let queueable = state.frames.last().is_some_and(|frame| frame.queueable);
            (queueable, state.deliverer)
        });
        if !queueable {
            return true;
        }
        let delivered = deliverer.is_none_or(|deliver| deliver());
        let failed = STATE.with(|state| std::mem::take(&mut state.borrow_mut().delivery_failed));
        delivered && !failed
    }
}

impl Drop for StepFrame {
    fn drop(&mut self) {
        if !self.entered {
            return;
        }
        let frame = STATE.with(|state| state.borrow_mut().frames.pop());
        // Dropped outside the borrow: a resource's drop may be anything.
        drop(frame);
    }
}

/// Marks a user callback of connection `db` running for as long as it lives (see
/// [`enter_callback`] and [`running_on`]).
pub struct CallbackRunning(());

impl Drop for CallbackRunning {
    fn drop(&mut self) {
        STATE.with(|state| state.borrow_mut().running.pop());
    }
}

/// Enters a user callback of connection `db`: runs `f` on the innermost step's resource
/// slot when the callback is one that step runs itself (None otherwise: no step in
/// progress, or a callback called from inside another callback without a step of its
/// own, e.g. an aggregate finished by a reset), then, when `f` succeeds, counts the
/// callback running. One access to the thread's state, as it runs per call. `f` must not
/// enter or leave a step.
pub fn enter_callback<T, E>(
    db: u32,
    f: impl FnOnce(Option<&mut Option<StepResource>>) -> Result<T, E>,
) -> Result<(T, CallbackRunning), E> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let depth = depth(&state);
        let slot = match state.frames.last_mut() {
            Some(frame) if frame.depth == depth => Some(&mut frame.lent),
            _ => None,
        };
        let made = f(slot)?;
        state.running.push(db);
        Ok((made, CallbackRunning(())))
    })
}

/// [`enter_callback`]'s usual case, with nothing to make: the innermost step's resource,
/// lent by `owner` and used by fewer than `most` callbacks, is used once more by a callback
/// of connection `db`, which counts itself running. Its epoch, or None (nothing counted)
/// when the callback must be entered through [`enter_callback`].
#[inline]
pub fn enter_lent(db: u32, owner: usize, most: u32) -> Option<(u64, CallbackRunning)> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let depth = depth(&state);
        let frame = state.frames.last_mut().filter(|frame| frame.depth == depth)?;
        let lent = frame
            .lent
            .as_mut()
            .filter(|lent| lent.owner == owner && lent.used + 1 < most)?;
        lent.used += 1;
        let epoch = lent.epoch;
        state.running.push(db);
        Some((epoch, CallbackRunning(())))
    })
}

/// The other usual case: while the innermost step has lent nothing, its first `most`
/// callbacks (of connection `db`, counted running) make their values in the scope of
/// whoever called the step, so that the step of a one-row `get()`, or of each row of
/// `all()`, costs no scope of its own; they leave a few values each there, freed when
/// that call returns. The epoch they share (made on the first), or None (nothing counted).
pub fn enter_bare(db: u32, most: u32) -> Option<(u64, CallbackRunning)> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let state = &mut *state;
        let depth = depth(state);
        let frame = state.frames.last_mut().filter(|frame| frame.depth == depth)?;
        if frame.lent.is_some() || frame.bare >= most {
            return None;
        }
        frame.bare += 1;
        if frame.bare_epoch == 0 {
            frame.bare_epoch = state.next_epoch;
            state.next_epoch += 1;
        }
        let epoch = frame.bare_epoch;
        state.running.push(db);
        Some((epoch, CallbackRunning(())))
    })
}

/// A new epoch for a resource lent to a step (unique on this thread).
pub fn new_epoch() -> u64 {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let epoch = state.next_epoch;
        state.next_epoch += 1;
        epoch
    })
}

/// Whether a callback of connection `db` is running on this thread.
pub fn running_on(db: u32) -> bool {
    STATE.with(|state| state.borrow().running.contains(&db))
}

/// Whether a callback entered now may queue its call instead of running it: it is run
/// directly by a step that queues (a read-only statement's, with no callback running).
pub fn may_queue() -> bool {
    STATE.with(|state| {
        let state = state.borrow();
        state.running.is_empty() && state.frames.last().is_some_and(|frame| frame.queueable)
    })
}

/// Records that delivering queued calls failed: the innermost queueing step fails.
pub fn delivery_failed() {
    STATE.with(|state| state.borrow_mut().delivery_failed = true);
}

/// Registers how this thread's queued calls are delivered (once is enough).
pub fn set_deliverer(deliver: fn() -> bool) {
    STATE.with(|state| state.borrow_mut().deliverer = Some(deliver));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a callback entered now would be lent a slot, and whether one is lent.
    fn probe(db: u32) -> (Option<bool>, CallbackRunning) {
        enter_callback(db, |slot| Ok::<_, ()>(slot.map(|lent| lent.is_some()))).unwrap()
    }

    #[test]
    fn a_resource_lives_as_long_as_its_step() {
        count_registered(1);
        assert_eq!(probe(1).0, None);
        let outer = StepFrame::enter(|| false);
        let lent = StepResource {
            owner: 1,
            used: 0,
            epoch: 1,
            resource: Box::new(1u8),
        };
        let ((), callback) = enter_callback(7, |slot| {
            *slot.ok_or(())? = Some(lent);
            Ok::<_, ()>(())
        })
        .unwrap();
        {
            assert!(running_on(7) && !running_on(8));
            // Inside a callback with no step of its own: the outer step is not lent.
            let (nested, _inner) = probe(7);
            assert_eq!(nested, None);
            let _inner_step = StepFrame::enter(|| false);
            assert_eq!(probe(7).0, Some(false));
        }
        drop(callback);
        assert!(!running_on(7));
        let (lent, again) = probe(9);
        assert_eq!(lent, Some(true));
        assert!(running_on(9));
        drop(again);
        // A failed entry counts nothing.
        assert!(enter_callback(10, |_| Err::<(), _>(())).is_err() && !running_on(10));
        drop(outer);
        assert_eq!(probe(1).0, None);
    }

    #[test]
    fn a_steps_first_callbacks_go_bare_and_share_an_epoch() {
        count_registered(1);
        // No step in progress: nothing to go bare in.
        assert!(enter_bare(1, 2).is_none());
        let step = StepFrame::enter(|| false);
        let (first, one) = enter_bare(1, 2).unwrap();
        drop(one);
        let (second, two) = enter_bare(1, 2).unwrap();
        {
            // A callback inside another one, with no step of its own, is not the step's.
            assert!(enter_bare(1, 2).is_none());
        }
        drop(two);
        assert_eq!(first, second);
        // Past `most`, the step's next callback is entered otherwise.
        assert!(enter_bare(1, 2).is_none());
        drop(step);
        let step = StepFrame::enter(|| false);
        let epoch = new_epoch();
        let ((), lender) = enter_callback(1, |slot| {
            *slot.ok_or(())? = Some(StepResource {
                owner: 1,
                used: 0,
                epoch,
                resource: Box::new(1u8),
            });
            Ok::<_, ()>(())
        })
        .unwrap();
        drop(lender);
        // A step that has lent a resource shares it rather than going bare.
        assert!(enter_bare(1, 2).is_none());
        let (lent, _running) = enter_lent(1, 1, 256).unwrap();
        assert_ne!(lent, first);
        drop(step);
    }

    thread_local! {
        static DELIVERIES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    fn delivers() -> bool {
        DELIVERIES.with(|n| n.set(n.get() + 1));
        true
    }

    fn fails() -> bool {
        false
    }

    #[test]
    fn only_a_read_only_step_outside_callbacks_queues_and_it_delivers_before_returning() {
        count_registered(1);
        set_deliverer(delivers);
        let step = StepFrame::enter(|| true);
        assert!(may_queue());
        {
            // A callback is running: its calls and those of a step it runs go directly.
            let (_, callback) = probe(1);
            assert!(!may_queue());
            let inner = StepFrame::enter(|| true);
            assert!(!may_queue());
            assert!(inner.finish());
            drop(inner);
            drop(callback);
        }
        assert_eq!(DELIVERIES.with(|n| n.get()), 0);
        assert!(step.finish());
        assert_eq!(DELIVERIES.with(|n| n.get()), 1);
        drop(step);
        let writer = StepFrame::enter(|| false);
        assert!(!may_queue());
        assert!(writer.finish());
        drop(writer);
        assert_eq!(DELIVERIES.with(|n| n.get()), 1);
        // A delivery that failed inside a callback SQLite ran (whose failure it may have
        // ignored) fails the step, once.
        let step = StepFrame::enter(|| true);
        delivery_failed();
        assert!(!step.finish());
        assert!(step.finish());
        drop(step);
        set_deliverer(fails);
        let step = StepFrame::enter(|| true);
        assert!(!step.finish());
    }

    #[test]
    fn a_step_enters_no_frame_while_no_callback_is_registered() {
        set_deliverer(fails);
        let asked = std::cell::Cell::new(false);
        let step = StepFrame::enter(|| {
            asked.set(true);
            true
        });
        assert!(!asked.get(), "a step that enters no frame does not ask what it writes");
        assert!(!may_queue() && enter_bare(1, 2).is_none());
        assert!(step.finish(), "nothing to deliver");
        drop(step);
        assert_eq!(count_registered(1), 1);
        let step = StepFrame::enter(|| true);
        assert!(may_queue());
        assert!(
            !step.finish(),
            "the frame delivers (and here fails) once a callback is registered"
        );
        drop(step);
        assert_eq!(count_registered(-1), 0);
        assert_eq!(count_registered(-1), 0, "the count never goes below zero");
    }
}
