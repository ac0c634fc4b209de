//! SQL that the store builds per call (the filters of listAssigns, listRoleKeys and
//! findReflexion with a context), run on the connection's statement cache.

use crate::engine::bind::{bind_raw, BoundValues};
use crate::engine::connection::Core;
use crate::engine::js::protocol::RowMode;
use crate::engine::rows::{all_rows, Read, RowShape};
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite::RawStmt;

/// Runs SQL the store builds per call (a WHERE of the filters given): prepared (its
/// errors come first, as the original prepared it per call), then bound with the values
/// `bind` computes for it (better-sqlite3's rules, `bind_args_with`); returns its rows.
pub fn query(
    core: &Core,
    js: Napi,
    sql: &str,
    bind: impl FnOnce(&RawStmt) -> SResult<BoundValues>,
    rows: &RowShape,
) -> SResult<Raw> {
    let mut kept = core.statements.kept.try_borrow_mut().map_err(|_| busy())?;
    let kept = kept.by_text(&core.conn, sql)?;
    let stmt = &mut kept.stmt;
    let values = bind(stmt)?;
    bind_raw(stmt, &values)?;
    let read = Read {
        shape: rows,
        mode: RowMode::Flat,
        safe_integers: false,
    };
    let output = all_rows(js, &core.conn, stmt, &mut kept.layout, read);
    stmt.clear_bindings();
    output
}

/// A store call made while another one holds the statement cache (a caller's callback
/// that re-entered the store from inside a statement's binding).
pub fn busy() -> StoreError {
    StoreError::type_error("This database connection is busy executing a query")
}
