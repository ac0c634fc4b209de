//! A connection owned by Rust (`Core`), shared by the store's methods and the
//! better-sqlite3-compatible `Database` on it, so that both run inside the same
//! transactions; JS holds it through `native_db`.
//!
//! Calls are re-entrant, as with better-sqlite3: a caller's callback (a `toJSON`, a
//! getter, a `valueOf`) that runs during a call may call again on the same connection,
//! within the busy rules (`busy`); a nested transaction becomes a savepoint. Only closing
//! is refused while a call is running.
//!
//! - `open`: opening like better-sqlite3, the per-connection limits and switches.
//! - `statement_cache`: every statement the connection keeps (`Statements`).
//! - `busy`: better-sqlite3's busy rules over that cache.
//! - `backups`: the backups in progress from the connection.
//! - `settings`: unsafe mode and the `verbose` logger.
//! - `companions`: what a layer above keeps with the connection (the store's state).
//! - `native_db`: the napi class, the handle table, `with_handle`.

pub mod backups;
pub mod busy;
pub mod companions;
pub mod native_db;
pub mod open;
pub mod settings;
pub mod statement_cache;

pub use native_db::{core_of, with_handle, NativeDb};

use std::cell::RefCell;

use rusqlite::Connection;

use crate::error::StoreError;
use backups::Backups;
use companions::Companions;
use settings::Settings;
use statement_cache::Statements;

/// One open connection. Field order is drop order: its statements and backups end
/// before the connection closes, its companions after.
pub struct Core {
    pub statements: Statements,
    pub backups: RefCell<Backups>,
    pub conn: Connection,
    pub memory: bool,
    pub readonly: bool,
    /// better-sqlite3's per-connection settings (unsafe mode, the `verbose` logger).
    pub settings: Settings,
    pub companions: Companions,
}

impl Core {
    pub fn new(conn: Connection, memory: bool, readonly: bool) -> Core {
        Core {
            statements: Statements::default(),
            backups: RefCell::default(),
            conn,
            memory,
            readonly,
            settings: Settings::default(),
            companions: Companions::default(),
        }
    }

    /// Closes the connection: its statements finalized and its backups finished first,
    /// its companions dropped after (a checkpoint thread ends once it is closed). On
    /// failure the connection is still open, and handed back.
    fn close(self) -> Result<(), Box<(Core, StoreError)>> {
        let Core {
            statements,
            backups,
            conn,
            memory,
            readonly,
            settings,
            companions,
        } = self;
        statements.clear();
        backups.borrow_mut().clear();
        match conn.close() {
            Ok(()) => {
                drop(companions);
                Ok(())
            }
            Err((conn, e)) => {
                let core = Core {
                    statements,
                    backups,
                    conn,
                    memory,
                    readonly,
                    settings,
                    companions,
                };
                Err(Box::new((core, StoreError::from(e))))
            }
        }
    }
}
