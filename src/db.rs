//! The native connection: one SQLite connection owned by Rust, shared by the store
//! methods and the better-sqlite3-compatible `db` facade, so that both run inside the
//! same transactions.

use std::cell::RefCell;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::{Connection, OpenFlags};

use crate::errors::{SResult, StoreError};

pub struct Core {
    /// Prepared statements handed out to JS through the facade. Declared before
    /// `conn` so they are finalized before the connection closes.
    pub facade: crate::facade::StatementTable,
    pub conn: Connection,
    /// The path as the caller gave it (returned as `effective.db_path`).
    pub path: String,
    pub memory: bool,
    pub readonly: bool,
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
        match open_connection(&path, &opts) {
            Ok(core) => {
                let path = core.path.clone();
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
        self.with(&env, |core| crate::schema::open_store(&core.conn))
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
        if slot.as_ref().is_some_and(|c| c.facade.iterators > 0) {
            return Err(busy().throw(env.raw()));
        }
        if let Some(core) = slot.take() {
            let Core { mut facade, conn, path, memory, readonly } = core;
            facade.clear();
            if let Err((conn, e)) = conn.close() {
                // Keep the connection usable rather than leak it half-closed.
                *slot = Some(Core { facade, conn, path, memory, readonly });
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
    pub fn with_atomic<T>(&self, env: &Env, f: impl FnOnce(&mut Core) -> SResult<T>) -> Result<T> {
        with_slot(&self.inner, env, |core| {
            let nested = crate::exec::begin(&core.conn, "IMMEDIATE")?;
            let result = f(core);
            crate::exec::finish(&core.conn, nested, result)
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
        // A Rust panic must never abort the hub: it becomes a JS Error instead. If it
        // struck inside a transaction the store opened, roll that back too.
        let was_autocommit = core.conn.is_autocommit();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut *core))) {
            Ok(result) => result.map_err(|e| e.throw(env.raw())),
            Err(panic) => {
                if was_autocommit && !core.conn.is_autocommit() {
                    let _ = core.conn.execute_batch("ROLLBACK");
                }
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

fn open_connection(path: &str, opts: &OpenOptions) -> SResult<Core> {
    let memory = path == ":memory:" || path.is_empty();
    let readonly = opts.readonly.unwrap_or(false);
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if readonly {
        flags |= OpenFlags::SQLITE_OPEN_READ_ONLY;
    } else if opts.file_must_exist.unwrap_or(false) {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE;
    } else {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| match e {
        // rusqlite appends ": <path>" to SQLite's message; better-sqlite3 does not.
        rusqlite::Error::SqliteFailure(err, Some(msg)) => {
            let suffix = format!(": {path}");
            let msg = msg.strip_suffix(&suffix).map(str::to_string).unwrap_or(msg);
            StoreError::sqlite(err.extended_code, msg)
        }
        other => StoreError::from(other),
    })?;
    let timeout = opts.timeout.unwrap_or(5000.0);
    conn.busy_timeout(std::time::Duration::from_millis(timeout.clamp(0.0, i32::MAX as f64) as u64))?;
    configure(&conn);
    Ok(Core { facade: Default::default(), conn, path: path.to_string(), memory, readonly })
}

/// Per-connection settings applied right after opening.
pub fn configure(conn: &Connection) {
    conn.set_prepared_statement_cache_capacity(256);
    unsafe {
        // better-sqlite3 runs every connection in defensive mode.
        rusqlite::ffi::sqlite3_db_config(conn.handle(), rusqlite::ffi::SQLITE_DBCONFIG_DEFENSIVE, 1i32, std::ptr::null_mut::<i32>());
        // Query-planner stability: with STAT4 compiled in, SQLite otherwise re-prepares
        // (re-parses) a cached statement every time a parameter that meets an indexed
        // column gets a new value. Plans only differ when ANALYZE data exists, and the
        // store's statements are written for their indexes, so stable plans are kept.
        rusqlite::ffi::sqlite3_db_config(conn.handle(), rusqlite::ffi::SQLITE_DBCONFIG_ENABLE_QPSG, 1i32, std::ptr::null_mut::<i32>());
    }
}

/// Values shared by the store modules.
pub fn now() -> i64 {
    crate::uuid7::now_ms()
}

