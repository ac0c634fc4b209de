//! What every user callback (function, aggregate, virtual table) shares at the JS
//! boundary: SQLite values as JS arguments, a JS result as SQLite's, JS values kept
//! between calls, and how a failed callback reports itself. The rules are
//! better-sqlite3's `Data::GetValueJS`, `Data::ResultValueFromJS` and `DataConverter`.

use std::cell::{Cell, RefCell};

use rusqlite::types::ValueRef;

use crate::error::{SResult, StoreError};
use crate::js::bind::bound_from_js;
use crate::js::napi::{JsRef, Napi, Raw};
use crate::js::slots;
use crate::js::throw::Throw;
use crate::js::value::JsVal;
use crate::sqlite::raw::functions::ResultSink;
use crate::sqlite::step_frames::{self, CallbackRunning};

thread_local! {
    /// How many callbacks are registered on this thread's connections.
    static REGISTERED: Cell<u32> = const { Cell::new(0) };
}

/// Marks connection `db` busy while a callback SQLite runs for one of its statements:
/// better-sqlite3's `busy`, which refuses every use of the connection meanwhile (the
/// store's methods included, as they run statements).
pub struct Running(CallbackRunning);

impl Running {
    pub fn enter(db: u32) -> Running {
        Running(CallbackRunning::enter(db))
    }
}

/// Whether a callback of connection `db`'s statement is running (see [`Running`]).
pub fn running_on(db: u32) -> bool {
    step_frames::running_on(db)
}

/// Counts a registered callback for as long as SQLite keeps it, in the CALLBACKS result
/// slot: the JS layer asks whether a connection is busy (`facadeCheckIdle`) only when a
/// callback exists that could be running, so its checks cost nothing otherwise.
pub struct Registered(Napi);

impl Registered {
    pub fn new(js: Napi) -> Registered {
        count_registered(js, 1);
        Registered(js)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        count_registered(self.0, -1);
    }
}

fn count_registered(js: Napi, delta: i32) {
    let count = REGISTERED.with(|count| {
        count.set(count.get().saturating_add_signed(delta));
        count.get()
    });
    // Unwritable (the environment is gone): nothing is left to check then.
    let _ = slots::set(js, slots::CALLBACKS, f64::from(count));
}

/// Refuses JS-only work on connection `db` while one of its callbacks runs (the glue
/// asks only when the CALLBACKS slot says some callback is registered). Unlike `with_handle`, a
/// closed connection is not an error: better-sqlite3's mode switches work on one.
#[napi_derive::napi]
pub fn facade_check_idle(env: napi::Env, db: u32) -> napi::Result<()> {
    if running_on(db) {
        return Err(StoreError::type_error("This database connection is busy executing a query").throw(env.raw()));
    }
    Ok(())
}

/// A SQLite value as a callback argument: INTEGER as a number, or a BigInt with
/// `safeIntegers`; TEXT decoded by V8; BLOB as a new Buffer.
pub fn value_js(js: Napi, value: ValueRef<'_>, safe_ints: bool) -> SResult<Raw> {
    match value {
        ValueRef::Integer(n) if safe_ints => js.bigint(n),
        ValueRef::Integer(n) => js.number(n as f64),
        ValueRef::Real(f) => js.number(f),
        ValueRef::Text(t) => js.string_utf8(t),
        ValueRef::Blob(b) => js.buffer_copy(b),
        ValueRef::Null => js.null(),
    }
}

/// A callback's JS result as the SQL result. `prefix` names the callback for the
/// errors ("User-defined function f() returned").
pub fn set_result(js: Napi, value: Raw, out: &mut ResultSink, prefix: impl FnOnce() -> String) -> SResult<()> {
    if let Some(n) = js.number_value(value) {
        out.set(ValueRef::Real(n));
        return Ok(());
    }
    let value = JsVal::wrap(js, value)?;
    match bound_from_js(&value) {
        Ok(bound) => {
            out.set(ValueRef::from(&bound));
            Ok(())
        }
        Err(StoreError::Pending) => Err(StoreError::Pending),
        Err(_) if value.bigint_i64().is_some() => Err(StoreError::range_error(c_message(
            prefix() + " a bigint that was too big",
        ))),
        Err(_) => Err(StoreError::type_error(c_message(prefix() + " an invalid value"))),
    }
}

/// better-sqlite3 builds these messages as C strings: a NUL in a name ends them there.
fn c_message(mut message: String) -> String {
    if let Some(nul) = message.find('\0') {
        message.truncate(nul);
    }
    message
}

/// Leaves the callback's failure as the pending JS exception that the statement call
/// throws once SQLite stops: a JS exception already pending is kept (the callback's
/// own throw), any other failure is thrown now.
pub fn report(js: Napi, error: StoreError) {
    let error = match error {
        StoreError::Pending if js.exception_pending().unwrap_or(true) => return,
        StoreError::Pending => StoreError::error("triflux-native-store: a Node-API call failed in a user callback"),
        other => other,
    };
    let _ = error.throw(js.env());
}

/// JS values kept between callbacks (an aggregate's running value, its `start`),
/// which may be primitives: Node-API before version 10 references only objects, so they
/// live in one JS array, each in a numbered cell. A freed cell is reused.
pub struct Cells {
    array: JsRef,
    free: RefCell<Vec<u32>>,
    len: Cell<u32>,
}

impl Cells {
    pub fn new(js: Napi) -> SResult<Self> {
        Ok(Cells {
            array: js.keep(js.array(0)?)?,
            free: RefCell::default(),
            len: Cell::new(0),
        })
    }

    /// Stores `value` in a new cell.
    pub fn put(&self, js: Napi, value: Raw) -> SResult<u32> {
        let index = match self.free.borrow_mut().pop() {
            Some(index) => index,
            None => {
                let index = self.len.get();
                self.len.set(index + 1);
                index
            }
        };
        self.set(js, index, value)?;
        Ok(index)
    }

    pub fn get(&self, js: Napi, index: u32) -> SResult<Raw> {
        js.element(self.array.get(js)?, index)
    }

    pub fn set(&self, js: Napi, index: u32, value: Raw) -> SResult<()> {
        js.set_element(self.array.get(js)?, index, value)
    }

    /// Empties a cell (its value may be collected) for reuse. With a JS exception
    /// pending (a callback threw) Node-API writes nothing: the value then stays until the
    /// cell is reused.
    pub fn release(&self, js: Napi, index: u32) {
        let _ = js.undefined().and_then(|u| self.set(js, index, u));
        self.free.borrow_mut().push(index);
    }
}
