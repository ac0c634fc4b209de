//! `db.backup()` and `db.serialize()`: the native half of lib/database/backup.cjs, which holds
//! better-sqlite3's argument checks and steps the backup from the event loop.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::backup;
use crate::engine::connection::{core_of, with_handle};

use crate::engine::connection::busy::no_iterators;

/// Starts a backup of schema `attached` into the file `dest`; returns its id.
/// `unlink`: `dest` is new, remove it unless the backup completes.
#[napi]
pub fn backup_start(env: Env, db: u32, attached: String, dest: String, unlink: bool) -> Result<u32> {
    with_handle(&env, db, |core| {
        super::start(&mut core.backups.borrow_mut(), &core.conn, &attached, &dest, unlink)
    })
}

/// One `sqlite3_backup_step(pages)`; returns [totalPages, remainingPages].
#[napi]
pub fn backup_transfer(env: Env, db: u32, id: u32, pages: i32) -> Result<Vec<i32>> {
    with_handle(&env, db, |core| {
        let (total, remaining) = super::step(&mut core.backups.borrow_mut(), id, pages)?;
        Ok(vec![total, remaining])
    })
}

/// Ends a backup; a no-op once the connection is closed (closing ended it).
#[napi]
pub fn backup_close(db: u32, id: u32) {
    if let Some(core) = core_of(db) {
        if let Ok(mut backups) = core.backups.try_borrow_mut() {
            backups.close(id);
        }
    }
}

/// `db.serialize({ attached })`: the schema's bytes as a Buffer.
#[napi]
pub fn serialize(env: Env, db: u32, attached: String) -> Result<Buffer> {
    with_handle(&env, db, |core| {
        no_iterators(core)?;
        Ok(backup::serialize(&core.conn, &attached)?.into())
    })
}
