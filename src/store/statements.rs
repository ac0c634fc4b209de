//! The store's statements, by name: the JS layer (`lib/store/`) computes every value as
//! the original did and runs `S.<name>.run/get/all(...)` with them, as the original ran
//! its prepared statements. Here each is prepared once per connection, bound with
//! better-sqlite3's rules (in the statement's parameter order, with its errors) and its
//! rows written in the shape the original's `parse*Row` gave them.

use std::sync::OnceLock;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::query::busy;
use super::scale;
use super::stmt::{Effect, Stmt};
use crate::engine::bind::{args_into, bind_args, bind_raw, Args, BoundValues, Collect, TOO_FEW, TOO_MANY};
use crate::engine::connection::{with_handle, Core};
use crate::engine::js::protocol::{CallKey, RowMode};
use crate::engine::js::sql_value::bound_from_js;
use crate::engine::js::value::JsVal;
use crate::engine::rows::{all_rows, first_row, Read, RowLayout};
use crate::engine::statement::Statement;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite::{self as raw, RawStmt};
use crate::store::schema::SchemaVersion;

/// Every statement, numbered in the order the original prepared them.
fn all() -> &'static [Stmt] {
    static ALL: OnceLock<Vec<Stmt>> = OnceLock::new();
    ALL.get_or_init(|| {
        [
            super::agents::STATEMENTS,
            super::roles::STATEMENTS,
            super::messages::STATEMENTS,
            super::human::STATEMENTS,
            super::messages::DEAD_LETTER_STATEMENTS,
            super::assign::STATEMENTS,
            super::stats::STATEMENTS,
            super::reflexion::STATEMENTS,
        ]
        .concat()
    })
}

/// The numbers the store keeps its statements under in the connection's statement cache:
/// `2 * id` for `sql`, `2 * id + 1` for `large_sql`.
fn slot(id: usize, large: bool) -> usize {
    2 * id + usize::from(large)
}

/// Prepares the statements `version`'s original prepared at open, in its order.
pub fn prepare_at_open(core: &Core, version: SchemaVersion) -> SResult<()> {
    let mut kept = core.statements.kept.try_borrow_mut().map_err(|_| busy())?;
    for (id, stmt) in all().iter().enumerate().filter(|(_, s)| s.at_open && s.serves(version)) {
        kept.numbered(&core.conn, slot(id, false), stmt.sql)?;
    }
    Ok(())
}

/// Binds `params` (the call's arguments) to statement `id`, runs `f` on it, then lets
/// `scale` see what it did.
fn execute<T>(
    core: &Core,
    js: Napi,
    id: u32,
    params: &[Raw],
    f: impl FnOnce(&mut Statement, &Stmt, &mut Option<RowLayout>) -> SResult<T>,
) -> SResult<T> {
    let def = all()
        .get(id as usize)
        .ok_or_else(|| StoreError::range_error("no such store statement"))?;
    let large = def.large_sql.is_some() && scale::large(core);
    let output = {
        let mut kept = core.statements.kept.try_borrow_mut().map_err(|_| busy())?;
        let mut values = BoundValues::new();
        bound_values(
            js,
            &kept.numbered(&core.conn, slot(id as usize, false), def.sql)?.stmt,
            params,
            &mut values,
        )?;
        let sql = if large {
            def.large_sql.unwrap_or(def.sql)
        } else {
            def.sql
        };
        let kept = kept.numbered(&core.conn, slot(id as usize, large), sql)?;
        let stmt = &mut kept.stmt;
        bind_raw(stmt, &values)?;
        let output = f(stmt, def, &mut kept.layout);
        stmt.clear_bindings();
        output?
    };
    match def.effect {
        Effect::InsertsMessage => scale::after_message_insert(core),
        Effect::TickRead => scale::after_tick_read(core),
        Effect::None => {}
    }
    Ok(output)
}

/// The values of a call, by parameter index. A statement with named parameters takes
/// the JS layer's row as its values in parameter order (`lib/store/statements.cjs` maps
/// the row's keys to them), bound one by one in that order as better-sqlite3 binds a
/// named row; any other statement binds the call's arguments with better-sqlite3's
/// positional rules (arrays spread, and so on).
fn bound_values(js: Napi, stmt: &RawStmt, params: &[Raw], out: &mut BoundValues) -> SResult<()> {
    if !is_named(stmt) {
        let mut args = Args::new();
        args_into(js, params, &mut args)?;
        return bind_args(js, &mut Collect { params: stmt, out }, &args, None);
    }
    let count = stmt.parameter_count();
    if params.len() != count {
        return Err(StoreError::range_error(if params.len() < count {
            TOO_FEW
        } else {
            TOO_MANY
        }));
    }
    for (i, &value) in params.iter().enumerate() {
        out.push((i + 1, bound_from_js(&JsVal::wrap(js, value)?)?));
    }
    Ok(())
}

/// Whether the statement's parameters are named (`@name`); the store never mixes kinds.
fn is_named(stmt: &RawStmt) -> bool {
    stmt.parameter_name(1).is_some_and(|name| name.starts_with('@'))
}

/// Steps a write to its end; the change count as better-sqlite3 reports it (0 when this
/// statement changed nothing, although `sqlite3_changes` keeps the last write's count).
fn run(core: &Core, stmt: &mut Statement) -> SResult<f64> {
    let before = raw::total_changes(&core.conn);
    while stmt.step() == rusqlite::ffi::SQLITE_ROW {}
    if stmt.reset() != rusqlite::ffi::SQLITE_OK {
        return Err(raw::last_error(&core.conn));
    }
    Ok(if raw::total_changes(&core.conn) == before {
        0.0
    } else {
        raw::changes(&core.conn) as f64
    })
}

/// One statement as the JS layer sees it.
#[napi(object)]
pub struct StatementInfo {
    /// The number the statement calls take (`storeRun(db, id, ...)`).
    pub id: u32,
    pub name: String,
    /// Its named parameters in order (without `@`), or None when it takes `?`s.
    pub params: Option<Vec<String>>,
}

/// The statements of schema `version`'s store, with their numbers and the names of
/// their parameters (read from the SQL text, so that nothing is prepared for it; the
/// tests check them against SQLite's).
#[napi]
pub fn store_statements(version: u32) -> Result<Vec<StatementInfo>> {
    let version = SchemaVersion::from_number(version)
        .map_err(|_| Error::new(Status::InvalidArg, "the store's schema version is 6, 7 or 8"))?;
    Ok(all()
        .iter()
        .enumerate()
        .filter(|(_, def)| def.serves(version))
        .map(|(id, def)| {
            let names = named_parameters(def.sql);
            StatementInfo {
                id: id as u32,
                name: def.name.to_string(),
                params: (!names.is_empty()).then(|| names.into_iter().map(str::to_string).collect()),
            }
        })
        .collect())
}

/// The `@name` parameters of the store's SQL in order of first appearance (SQLite's
/// numbering); its texts hold no `@` elsewhere.
fn named_parameters(sql: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for (at, _) in sql.match_indices('@') {
        let rest = &sql[at + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if !names.contains(&&rest[..end]) {
            names.push(&rest[..end]);
        }
    }
    names
}

/// A store statement call `(key, ...params)` (a variadic function: `ffi::napi`; the key
/// names the connection and the statement, `protocol::CallKey`).
fn store_call(js: Napi, args: &[Raw], f: impl FnOnce(&Core, &[Raw], u32) -> SResult<Raw>) -> Result<Raw> {
    let (key, params) = CallKey::split(js, args)?;
    with_handle(&Env::from_raw(js.env()), key.db, |core| f(core, params, key.id))
}

/// `S.<name>.run(...params)` as `storeRun(key, ...params)`: the change count.
pub fn store_run(js: Napi, args: &[Raw]) -> Result<Raw> {
    store_call(js, args, |core, params, id| {
        let changes = execute(core, js, id, params, |stmt, _, _| run(core, stmt))?;
        js.number(changes)
    })
}

/// `S.<name>.get(...params)`: the first row (`rows::out::one_row`: a row of one value as
/// that value, its form in the ROW_FORM slot), undefined when there is none.
pub fn store_get(js: Napi, args: &[Raw]) -> Result<Raw> {
    store_rows(js, args, true)
}

/// `S.<name>.all(...params)`: the rows, shaped as the original's `parse*Row` shaped them.
pub fn store_all(js: Napi, args: &[Raw]) -> Result<Raw> {
    store_rows(js, args, false)
}

/// The rows of a store statement call: the first only, or all.
fn store_rows(js: Napi, args: &[Raw], first_only: bool) -> Result<Raw> {
    store_call(js, args, |core, params, id| {
        execute(core, js, id, params, |stmt, def, layout| {
            let read = Read {
                shape: def.rows,
                mode: RowMode::Flat,
                safe_integers: false,
            };
            if !first_only {
                return all_rows(js, &core.conn, stmt, layout, read);
            }
            first_row(js, &core.conn, stmt, layout, read)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::connection::statement_cache::KeptStatements;

    /// Every statement prepares on a fresh store of each version it serves, and the ones
    /// prepared per call take `?`s (`store_statements` reports no names for them without
    /// preparing them).
    #[test]
    fn statements_prepare_and_per_call_ones_are_positional() {
        for version in SchemaVersion::ALL {
            statements_prepare_on(version);
        }
        // Each version's store has each name once.
        for version in SchemaVersion::ALL {
            let names: Vec<_> = all().iter().filter(|s| s.serves(version)).map(|s| s.name).collect();
            let unique: std::collections::HashSet<_> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "statement names are unique in {version:?}");
        }
    }

    fn statements_prepare_on(version: SchemaVersion) {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::schema::open_store(&conn, version).unwrap();
        let mut kept = KeptStatements::default();
        for (id, def) in all().iter().enumerate().filter(|(_, def)| def.serves(version)) {
            let stmt = &kept.numbered(&conn, slot(id, false), def.sql).unwrap().stmt;
            if !def.at_open {
                assert!(
                    !is_named(stmt),
                    "{} is prepared per call but has named parameters",
                    def.name
                );
            }
            if let Some(large) = def.large_sql {
                kept.numbered(&conn, slot(id, true), large).unwrap();
            }
        }
    }
}
