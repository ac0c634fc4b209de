//! What a statement step lends the callbacks SQLite runs inside it: each `sqlite3_step`
//! is a frame, and a callback run directly by that step (not by a statement it called
//! itself) may leave one resource in the frame, dropped when the step returns. The JS
//! layer keeps one handle scope there for a whole batch of callbacks instead of one per
//! callback. Frames nest as steps do (a callback that runs a statement of its own).

use std::any::Any;
use std::cell::{Cell, RefCell};

struct Frame {
    /// How many callbacks were running when the step began: the callbacks it runs
    /// itself start at this depth.
    depth: u32,
    resource: Option<Box<dyn Any>>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    /// How many user callbacks are running on this thread (nested ones included).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// One step in progress: its resource is dropped with it, on every exit path.
pub struct StepFrame(());

impl StepFrame {
    pub fn enter() -> StepFrame {
        let depth = DEPTH.with(Cell::get);
        FRAMES.with(|frames| frames.borrow_mut().push(Frame { depth, resource: None }));
        StepFrame(())
    }
}

impl Drop for StepFrame {
    fn drop(&mut self) {
        let frame = FRAMES.with(|frames| frames.borrow_mut().pop());
        // Dropped outside the borrow: a resource's drop may be anything.
        drop(frame);
    }
}

/// Marks a user callback running for as long as it lives (see [`with_resource`]).
pub struct CallbackDepth(());

impl CallbackDepth {
    pub fn enter() -> CallbackDepth {
        DEPTH.with(|depth| depth.set(depth.get() + 1));
        CallbackDepth(())
    }
}

impl Drop for CallbackDepth {
    fn drop(&mut self) {
        DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// Runs `f` on the innermost step's resource slot when the calling callback (not yet
/// counted by [`CallbackDepth`]) is one that step runs itself; None otherwise (no step
/// in progress, or a callback called from inside another callback without a step of its
/// own, e.g. an aggregate finished by a reset). `f` must not enter or leave a step.
pub fn with_resource<R>(f: impl FnOnce(&mut Option<Box<dyn Any>>) -> R) -> Option<R> {
    let depth = DEPTH.with(Cell::get);
    FRAMES.with(|frames| {
        let mut frames = frames.borrow_mut();
        match frames.last_mut() {
            Some(frame) if frame.depth == depth => Some(f(&mut frame.resource)),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_lives_as_long_as_its_step() {
        assert!(with_resource(|_| ()).is_none());
        let outer = StepFrame::enter();
        with_resource(|slot| *slot = Some(Box::new(1u8))).unwrap();
        {
            let _callback = CallbackDepth::enter();
            // Inside a callback with no step of its own: the outer step is not lent.
            assert!(with_resource(|_| ()).is_none());
            let _inner = StepFrame::enter();
            assert!(with_resource(|slot| slot.is_none()).unwrap());
        }
        assert!(with_resource(|slot| slot.is_some()).unwrap());
        drop(outer);
        assert!(with_resource(|_| ()).is_none());
    }
}
