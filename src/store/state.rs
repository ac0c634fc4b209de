//! What the store keeps with its connection, as a companion of it (registered by the
//! first store call, `storeOpen` or a statistics reader's): what it last saw of the log's
//! size (`scale`, which also does its work after a commit) and the background
//! checkpointer (`wal`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::engine::checkpointer::Checkpointer;
use crate::engine::connection::Core;

#[derive(Default)]
pub struct StoreState {
    pub log: Cell<LogState>,
    /// None for an in-memory or read-only file, a file not in WAL mode, and before
    /// `storeOpen`. Dropped (its thread joined) after the connection closes.
    pub checkpointer: RefCell<Option<Checkpointer>>,
}

/// What the store last saw of this connection's file (see `scale`).
#[derive(Default, Clone, Copy)]
pub struct LogState {
    /// The large-log indexes exist.
    pub large: bool,
    /// The file's data version when the log's size was last checked.
    pub size_checked: Option<u32>,
    /// A check found the log large inside a transaction: convert after its commit.
    pub convert_after_commit: bool,
}

impl StoreState {
    /// The store's state on `core`'s connection (made on first use).
    pub fn of(core: &Core) -> Rc<StoreState> {
        core.companions.get_or_insert_with(StoreState::default)
    }
}
