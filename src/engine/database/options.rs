//! better-sqlite3's connection-level calls beyond statements: unsafe mode, the `verbose`
//! logger, a database opened from `serialize()`'s bytes, extensions, and a BigInt
//! `lastInsertRowid`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::ffi;

use crate::engine::connection::settings::Logger;
use crate::engine::connection::{core_of, with_handle};
use crate::engine::js::persistent::Persistent;
use crate::engine::js::throw::Throw;
use crate::engine::js::value::JsVal;
use crate::error::StoreError;
use crate::ffi::napi::Napi;
use crate::ffi::sqlite as raw;

use super::no_iterators;

/// `db.unsafeMode(on)`: DEFENSIVE follows it, as in better-sqlite3, which allows it
/// while the connection is busy (inside a callback); a closed connection keeps no mode.
#[napi]
pub fn facade_unsafe_mode(env: Env, db: u32, on: bool) -> Result<()> {
    let Some(core) = core_of(db) else {
        return Ok(());
    };
    core.settings.unsafe_mode.set(on);
    raw::set_db_config(&core.conn, ffi::SQLITE_DBCONFIG_DEFENSIVE, !on).map_err(|e| e.throw(env.raw()))
}

/// The `verbose` option's function (once, right after opening).
#[napi]
pub fn facade_set_logger(env: Env, db: u32, logger: Function<'_>) -> Result<()> {
    with_handle(&env, db, |core| {
        let function = Persistent::new(Napi::new(env.raw()), logger.raw())?;
        core.settings
            .logger
            .set(Logger { function, handle: db })
            .map_err(|_| StoreError::error("the verbose logger is already set"))
    })
}

/// `new Database(buffer)`: the bytes of `db.serialize()` as this connection's "main".
#[napi]
pub fn facade_deserialize(env: Env, db: u32, data: Buffer, readonly: bool) -> Result<()> {
    with_handle(&env, db, |core| raw::deserialize(&core.conn, &data, readonly))
}

/// `db.loadExtension(path, [entryPoint])`.
#[napi]
pub fn facade_load_extension(env: Env, db: u32, path: JsVal, entry_point: Option<JsVal>) -> Result<()> {
    with_handle(&env, db, |core| {
        no_iterators(core)?;
        let _busy = super::statements(core)?;
        let path = path.sqlite_text()?;
        let entry = entry_point.map(|e| e.sqlite_text()).transpose()?;
        raw::load_extension(&core.conn, &path, entry.as_deref())
    })
}
