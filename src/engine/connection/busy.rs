//! The busy rules of a connection and its statements: better-sqlite3's `REQUIRE_*`
//! checks, over one state per connection and statement.
//!
//! | state | entered | left, on every path |
//! |---|---|---|
//! | closed | `NativeDb::close` (refused in any other state) | never |
//! | running: a statement call, `exec`, `pragma`, a transaction step or the `verbose` logger | the statement table borrowed mutably ([`statements`]) | the borrow's drop: return, error, panic |
//! | in a callback: a user function, aggregate or table of this connection runs | `frames::CallbackRunning` (inside a running step) | the guard's drop |
//! | iterating (per statement; the connection counts them) | `HeldTable::begin_iteration`, after binding | the iterator's end (its last row, an error while stepping, `return()`), the statement's finalization (its object collected), `close` |
//!
//! A refusal is a check made before anything is entered, so it leaves nothing behind: a
//! call refused as busy leaves the iterator it was made on open. `with_handle` refuses
//! every call while the connection is in a callback (better-sqlite3's `busy`, which the
//! store's own calls honour too). The JS layer mirrors a statement's iterating state
//! (`busy`, `#locked`) from each native answer, and asks `facadeIterating` after a throw.

use std::cell::RefMut;

use napi_derive::napi;

use crate::engine::connection::statement_cache::{HeldStmt, HeldTable};
use crate::engine::connection::{core_of, Core};
use crate::error::{SResult, StoreError};

pub(crate) const BUSY: &str = "This database connection is busy executing a query";
const STATEMENT_BUSY: &str = "This statement is busy executing a query";

/// Refuses work while an iterator holds the connection (better-sqlite3's `iterators`).
pub(crate) fn no_iterators(core: &Core) -> SResult<()> {
    // A table borrowed by an outer call (a callback re-entering) counts as busy too.
    if core
        .statements
        .held
        .try_borrow()
        .map_or(true, |table| table.iterating())
    {
        return Err(StoreError::type_error(BUSY));
    }
    Ok(())
}

/// [`no_iterators`], except that unsafe mode allows what better-sqlite3's
/// `REQUIRE_DATABASE_NO_ITERATORS_UNLESS_UNSAFE` allows: writes while iterating.
pub(crate) fn no_iterators_unless_unsafe(core: &Core) -> SResult<()> {
    match core.statements.held.try_borrow() {
        Ok(table) => iterators_unless_unsafe(core, &table),
        Err(_) => Err(StoreError::type_error(BUSY)),
    }
}

/// [`no_iterators_unless_unsafe`] for a caller that holds the table already.
pub(crate) fn iterators_unless_unsafe(core: &Core, table: &HeldTable) -> SResult<()> {
    if table.iterating() && !core.settings.unsafe_mode.get() {
        return Err(StoreError::type_error(BUSY));
    }
    Ok(())
}

/// Enters "running": the statement table, unless an outer facade call is running (a
/// caller's getter re-entering during binding, a callback, the logger): then the
/// connection is busy, as in better-sqlite3.
pub(crate) fn statements(core: &Core) -> SResult<RefMut<'_, HeldTable>> {
    core.statements
        .held
        .try_borrow_mut()
        .map_err(|_| StoreError::type_error(BUSY))
}

/// Statement `id` for a call that needs it idle: an open iterator over it makes it busy
/// (better-sqlite3's `REQUIRE_STATEMENT_NOT_LOCKED`, checked after the connection's rules).
pub(crate) fn idle(table: &mut HeldTable, id: u32) -> SResult<&mut HeldStmt> {
    let held = table.get(id)?;
    if held.is_iterating() {
        return Err(StoreError::type_error(STATEMENT_BUSY));
    }
    Ok(held)
}

/// Whether statement `id` still has an open iterator: what the JS layer asks after an
/// iterator's call threw, to tell a refusal (still open) from its end. A table that an
/// outer call is running on cannot have been changed by the call that threw (it was
/// refused before reaching it), so the iterator is still open then.
#[napi]
pub fn facade_iterating(db: u32, id: u32) -> bool {
    let Some(core) = core_of(db) else {
        return false;
    };
    let iterating = match core.statements.held.try_borrow_mut() {
        Ok(mut table) => table.get(id).is_ok_and(|held| held.is_iterating()),
        Err(_) => true,
    };
    iterating
}
