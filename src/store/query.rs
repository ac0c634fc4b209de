//! SQL that the store builds per call (the filters of listAssigns, listRoleKeys and
//! findReflexion with a context), run on the connection's statement cache.

use crate::error::{SResult, StoreError};
use crate::js::bind::{bind_args_with, bind_raw, Arg, ParamInfo};
use crate::js::rows::{write_rows, RowShape};
use crate::native_db::Core;

/// Runs SQL the store builds per call (a WHERE of the filters given) with `args` bound as
/// better-sqlite3 binds them to the statement, or to `layout` when the SQL numbers the
/// parameters of a statement the original wrote with `?`s; writes its rows.
pub fn query(
    core: &Core,
    sql: &str,
    layout: Option<&dyn ParamInfo>,
    args: &[Arg<'_>],
    rows: &RowShape,
) -> SResult<String> {
    let mut cache = core.cache.try_borrow_mut().map_err(|_| busy())?;
    let stmt = cache.by_text(&core.conn, sql)?;
    let values = match layout {
        Some(layout) => bind_args_with(layout, args)?,
        None => bind_args_with(&*stmt, args)?,
    };
    bind_raw(stmt, &values)?;
    let output = write_rows(&core.conn, stmt, rows, false);
    stmt.clear_bindings();
    output
}

/// A store call made while another one holds the statement cache (a caller's callback
/// that re-entered the store from inside a statement's binding).
pub fn busy() -> StoreError {
    StoreError::type_error("This database connection is busy executing a query")
}
