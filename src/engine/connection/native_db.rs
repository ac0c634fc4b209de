//! The napi class JS holds a connection by (`NativeDb`), the numbered table its handle
//! finds it in, and `with_handle`, the one way from a native function to a connection.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::callbacks::frames;
use crate::engine::handles::Handles;
use crate::engine::js::protocol::CallKey;
use crate::engine::js::throw::Throw;
use crate::error::{SResult, StoreError};

use super::open::{self, OpenMode};
use super::Core;

/// The connection slot: shared by the NativeDb object and the handle registry (the
/// facade's hot paths are plain functions that find it by handle, which is cheaper
/// than a napi method call). `active` counts the native calls in progress (nested ones
/// included); the connection closes only when it is zero.
pub struct SlotState {
    core: RefCell<Option<Rc<Core>>>,
    active: Cell<u32>,
}

pub type Slot = Rc<SlotState>;

/// Counts a call as active for as long as it lives (also when a panic unwinds).
struct ActiveCall<'a>(&'a Cell<u32>);

impl<'a> ActiveCall<'a> {
    fn enter(active: &'a Cell<u32>) -> Self {
        active.set(active.get() + 1);
        ActiveCall(active)
    }
}

impl Drop for ActiveCall<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl SlotState {
    fn core(&self) -> Option<Rc<Core>> {
        self.core.borrow().clone()
    }
}

thread_local! {
    static CONNECTIONS: RefCell<Handles<Slot>> = RefCell::new(Handles::default());
}

/// The slot behind a handle (None once its NativeDb was collected).
fn slot_of(handle: u32) -> Option<Slot> {
    CONNECTIONS.with(|c| c.borrow().get(handle).cloned())
}

#[napi]
pub struct NativeDb {
    inner: Slot,
    path: String,
    handle: u32,
}

impl Drop for NativeDb {
    fn drop(&mut self) {
        CONNECTIONS.with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                c.remove(self.handle);
            }
        });
    }
}

#[napi(object)]
pub struct OpenOptions {
    pub readonly: Option<bool>,
    pub file_must_exist: Option<bool>,
    pub timeout: Option<f64>,
    /// SQLite's `immutable=1` (with `readonly`): see `OpenMode::immutable`.
    pub immutable: Option<bool>,
}

#[napi]
impl NativeDb {
    /// Opens (or creates) a database file like `new Database(path, options)`.
    #[napi(constructor)]
    pub fn new(env: Env, path: String, options: Option<OpenOptions>) -> Result<Self> {
        let opts = options.unwrap_or(OpenOptions {
            readonly: None,
            file_must_exist: None,
            timeout: None,
            immutable: None,
        });
        let mode = OpenMode {
            readonly: opts.readonly.unwrap_or(false),
            file_must_exist: opts.file_must_exist.unwrap_or(false),
            immutable: opts.immutable.unwrap_or(false),
            timeout_ms: opts.timeout,
        };
        match open::open(&path, mode) {
            Ok(conn) => {
                let core = Core::new(conn, open::is_memory(&path), mode.readonly);
                let inner: Slot = Rc::new(SlotState {
                    core: RefCell::new(Some(Rc::new(core))),
                    active: Cell::new(0),
                });
                let handle = CONNECTIONS.with(|c| c.borrow_mut().insert(inner.clone()));
                if !CallKey::fits(handle, 0) {
                    CONNECTIONS.with(|c| c.borrow_mut().remove(handle));
                    return Err(StoreError::range_error("Too many database connections are open").throw(env.raw()));
                }
                Ok(NativeDb { path, inner, handle })
            }
            Err(e) => Err(e.throw(env.raw())),
        }
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
        self.inner.core().is_some()
    }

    #[napi(getter)]
    pub fn in_transaction(&self) -> bool {
        self.inner.core().is_some_and(|c| !c.conn.is_autocommit())
    }

    #[napi(getter)]
    pub fn memory(&self) -> bool {
        self.inner.core().is_some_and(|c| c.memory)
    }

    #[napi(getter)]
    pub fn readonly(&self) -> bool {
        self.inner.core().is_some_and(|c| c.readonly)
    }

    /// Closes the connection; a second call is a no-op. Refused while a call is running
    /// (a callback inside a store method) or an iterator is open.
    #[napi]
    pub fn close(&self, env: Env) -> Result<()> {
        if self.inner.active.get() > 0 {
            return Err(busy().throw(env.raw()));
        }
        let Some(core) = self.inner.core.borrow_mut().take() else {
            return Ok(());
        };
        let core = match Rc::try_unwrap(core) {
            Ok(core) => core,
            // Unreachable while no call is active (only calls clone the Rc); keep it open.
            Err(core) => {
                *self.inner.core.borrow_mut() = Some(core);
                return Err(busy().throw(env.raw()));
            }
        };
        if core.statements.held.borrow().iterating() {
            *self.inner.core.borrow_mut() = Some(Rc::new(core));
            return Err(busy().throw(env.raw()));
        }
        match core.close() {
            Ok(()) => Ok(()),
            Err(failed) => {
                let (core, e) = *failed;
                // Keep the connection usable rather than leak it half-closed.
                *self.inner.core.borrow_mut() = Some(Rc::new(core));
                Err(e.throw(env.raw()))
            }
        }
    }
}

fn busy() -> StoreError {
    StoreError::type_error("This database connection is busy executing a query")
}

/// Runs `f` on the connection behind `handle`, turning every failure into a thrown JS
/// error: the one way from a native function to a connection.
pub fn with_handle<T>(env: &Env, handle: u32, f: impl FnOnce(&Core) -> SResult<T>) -> Result<T> {
    // A user function of this connection is running inside one of its statements.
    if frames::running_on(handle) {
        return Err(busy().throw(env.raw()));
    }
    match slot_of(handle) {
        Some(slot) => with_slot(&slot, env, f),
        None => Err(StoreError::not_open().throw(env.raw())),
    }
}

/// The open connection behind `handle`, if any, for work that must not throw (finalizers).
pub fn core_of(handle: u32) -> Option<Rc<Core>> {
    slot_of(handle)?.core()
}

fn with_slot<T>(slot: &SlotState, env: &Env, f: impl FnOnce(&Core) -> SResult<T>) -> Result<T> {
    let Some(core) = slot.core() else {
        return Err(StoreError::not_open().throw(env.raw()));
    };
    let _call = ActiveCall::enter(&slot.active);
    // A Rust panic must never abort the hub: it becomes a JS Error instead. Any
    // transaction guard the panic unwound through has rolled back its own writes.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&core))) {
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
