//! The native connection: one SQLite connection owned by Rust, shared by the store
//! methods and the better-sqlite3-compatible `db` facade, so that both run inside the
//! same transactions.

use std::cell::RefCell;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::Connection;

use crate::js::throw::Throw;
use crate::sqlite::connection::{self, OpenMode};
use crate::sqlite::error::{SResult, StoreError};
use crate::sqlite::statements::StatementTable;
use crate::sqlite::transaction::{Behavior, Tx};

pub struct Core {
    /// Prepared statements handed out to JS through the facade. Declared before
    /// `conn` so they are finalized before the connection closes.
    pub statements: StatementTable,
    pub conn: Connection,
    /// The path as the caller gave it (returned as `effective.db_path`).
    pub path: String,
    pub memory: bool,
    pub readonly: bool,
    /// Large-log indexes and row counters (issue 10); only used by the store.
    pub scale: crate::store::scale::ScaleState,
}

/// The connection slot: shared by the NativeDb object and the handle registry (the
/// facade's hot paths are plain functions that find it by handle, which is cheaper
/// than a napi method call).
pub type Slot = Rc<RefCell<Option<Core>>>;

thread_local! {
    static REGISTRY: RefCell<(Vec<Option<Slot>>, Vec<u32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

fn register(slot: &Slot) -> u32 {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(h) = r.1.pop() {
            r.0[h as usize] = Some(slot.clone());
            h
        } else {
            r.0.push(Some(slot.clone()));
            (r.0.len() - 1) as u32
        }
    })
}

/// The slot behind a handle (None once its NativeDb was collected).
pub fn slot_of(handle: u32) -> Option<Slot> {
    REGISTRY.with(|r| r.borrow().0.get(handle as usize).and_then(|s| s.clone()))
}

#[napi]
pub struct NativeDb {
    inner: Slot,
    path: String,
    handle: u32,
}

impl Drop for NativeDb {
    fn drop(&mut self) {
        let h = self.handle;
        REGISTRY.with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                if let Some(s) = r.0.get_mut(h as usize) {
                    *s = None;
                    r.1.push(h);
                }
            }
        });
    }
}

#[napi(object)]
pub struct OpenOptions {
    pub readonly: Option<bool>,
    pub file_must_exist: Option<bool>,
    pub timeout: Option<f64>,
}

#[napi]
impl NativeDb {
    /// Opens (or creates) a database file like `new Database(path, options)`.
    #[napi(constructor)]
    pub fn new(env: Env, path: String, options: Option<OpenOptions>) -> Result<Self> {
        let opts = options.unwrap_or(OpenOptions { readonly: None, file_must_exist: None, timeout: None });
        let mode = OpenMode {
            readonly: opts.readonly.unwrap_or(false),
            file_must_exist: opts.file_must_exist.unwrap_or(false),
            timeout_ms: opts.timeout,
        };
        match connection::open(&path, mode) {
            Ok(conn) => {
                let memory = connection::is_memory(&path);
                let core = Core {
                    statements: StatementTable::default(),
                    conn,
                    path: path.clone(),
                    memory,
                    readonly: mode.readonly,
                    scale: Default::default(),
                };
                let inner: Slot = Rc::new(RefCell::new(Some(core)));
                let handle = register(&inner);
                Ok(NativeDb { path, inner, handle })
            }
            Err(e) => Err(e.throw(env.raw())),
        }
    }

    /// Runs the store's open-time steps: PRAGMAs, `_meta`, schema v6 and migration.
    /// Returns the warnings the original prints (the glue sends them to console.warn).
    #[napi]
    pub fn open_store(&self, env: Env) -> Result<Vec<String>> {
        self.with(&env, |core| {
            let warnings = crate::sqlite::schema::open_store(&core.conn)?;
            crate::store::scale::open(core)?;
            Ok(warnings)
        })
    }

    /// The handle the facade's plain functions take.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.path.clone()
    }

    #[napi(getter)]
    pub fn open(&self) -> bool {
        self.inner.try_borrow().map(|c| c.is_some()).unwrap_or(true)
    }

    #[napi(getter)]
    pub fn in_transaction(&self) -> bool {
        match self.inner.try_borrow() {
            Ok(c) => c.as_ref().map(|c| !c.conn.is_autocommit()).unwrap_or(false),
            Err(_) => false,
        }
    }

    #[napi(getter)]
    pub fn memory(&self) -> bool {
        self.inner.try_borrow().ok().and_then(|c| c.as_ref().map(|c| c.memory)).unwrap_or(false)
    }

    #[napi(getter)]
    pub fn readonly(&self) -> bool {
        self.inner.try_borrow().ok().and_then(|c| c.as_ref().map(|c| c.readonly)).unwrap_or(false)
    }

    /// Closes the connection; a second call is a no-op.
    #[napi]
    pub fn close(&self, env: Env) -> Result<()> {
        let mut slot = match self.inner.try_borrow_mut() {
            Ok(s) => s,
            Err(_) => return Err(busy().throw(env.raw())),
        };
        if slot.as_ref().is_some_and(|c| c.statements.iterating()) {
            return Err(busy().throw(env.raw()));
        }
        if let Some(core) = slot.take() {
            let Core { mut statements, conn, path, memory, readonly, scale } = core;
            statements.clear();
            if let Err((conn, e)) = conn.close() {
                // Keep the connection usable rather than leak it half-closed.
                *slot = Some(Core { statements, conn, path, memory, readonly, scale });
                return Err(StoreError::from(e).throw(env.raw()));
            }
        }
        Ok(())
    }
}

fn busy() -> StoreError {
    StoreError::type_error("This database connection is busy executing a query")
}

impl NativeDb {
    /// The path as the caller gave it.
    pub fn db_path(&self) -> &str {
        &self.path
    }

    /// The connection slot, unless a call is running (used by the facade's finalizer).
    pub fn inner_mut(&self) -> std::result::Result<std::cell::RefMut<'_, Option<Core>>, std::cell::BorrowMutError> {
        self.inner.try_borrow_mut()
    }

    /// Runs `f` on the open connection, turning every failure into a thrown JS error.
    pub fn with<T>(&self, env: &Env, f: impl FnOnce(&mut Core) -> SResult<T>) -> Result<T> {
        with_slot(&self.inner, env, f)
    }

    /// [`NativeDb::with`] for methods that the original ran as several autocommit
    /// statements (a read, a write, a re-read): here they run in one IMMEDIATE
    /// transaction (a savepoint inside an open one). That is one round of file locking
    /// instead of one per statement, and no other writer can slip in between; the result
    /// is the one the original gives when nothing interleaves.
    pub fn with_atomic<T>(&self, env: &Env, f: impl FnOnce(&Connection) -> SResult<T>) -> Result<T> {
        with_slot(&self.inner, env, |core| {
            let tx = Tx::begin(&core.conn, Behavior::Immediate)?;
            let value = f(&core.conn)?;
            tx.commit()?;
            Ok(value)
        })
    }
}

/// [`NativeDb::with`] for a slot found by handle.
pub fn with_slot<T>(inner: &RefCell<Option<Core>>, env: &Env, f: impl FnOnce(&mut Core) -> SResult<T>) -> Result<T> {
    {
        let mut slot = match inner.try_borrow_mut() {
            Ok(s) => s,
            Err(_) => return Err(busy().throw(env.raw())),
        };
        let core = match slot.as_mut() {
            Some(c) => c,
            None => return Err(StoreError::not_open().throw(env.raw())),
        };
        // A Rust panic must never abort the hub: it becomes a JS Error instead. Any
        // transaction guard the panic unwound through has rolled back its own writes.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut *core))) {
            Ok(result) => result.map_err(|e| e.throw(env.raw())),
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(StoreError::error(format!("triflux-native-store internal error: {detail}")).throw(env.raw()))
            }
        }
    }
}

/// Values shared by the store modules.
pub fn now() -> i64 {
    crate::store::uuid7::now_ms()
}

