//! `db.function()` and `db.aggregate()`: JS functions registered as SQL functions, run by
//! SQLite inside a statement step, on the JS thread. The checks and defaults are the JS
//! layer's (lib/database/functions.cjs); what happens per call is better-sqlite3's
//! `CustomFunction` / `CustomAggregate`: a throw in JS stays the pending exception, which
//! the statement call then throws as it is.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use smallvec::SmallVec;

use crate::error::{SResult, StoreError};
use crate::js::callbacks::{report, set_result, value_js, Cells, Registered, Running};
use crate::js::napi::{JsRef, Napi, Raw, ScopeCache};
use crate::js::value::JsVal;
use crate::native_db::{with_handle, Core};
use crate::sqlite::raw::functions::{
    create_aggregate, create_scalar, AggregateFunction, FunctionFlags, ResultSink, ScalarFunction, SqlValue,
};

use super::{no_iterators, statements};

/// Arguments of one call, on the stack for the usual few.
type Argv = SmallVec<[Raw; 8]>;

/// better-sqlite3 refuses to register while a statement runs or an iterator is open.
pub(super) fn not_busy(core: &Core) -> SResult<()> {
    drop(statements(core)?);
    no_iterators(core)
}

/// A registered name as V8's `String::Utf8Value` gives it to SQLite, and as text for
/// the callback's error messages.
fn name_of(name: &JsVal) -> SResult<(Vec<u8>, String)> {
    let bytes = name.sqlite_text()?.to_vec();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok((bytes, text))
}

fn args_js(js: Napi, out: &mut Argv, args: &[SqlValue], safe_ints: bool) -> SResult<()> {
    for arg in args {
        out.push(value_js(js, arg.get(), safe_ints)?);
    }
    Ok(())
}

struct JsFunction {
    js: Napi,
    /// The connection's handle (busy while this runs).
    db: u32,
    _registered: Registered,
    f: JsRef,
    saved: ScopeCache,
    name: String,
    safe_ints: bool,
}

impl JsFunction {
    fn run(&self, args: &[SqlValue], out: &mut ResultSink) -> SResult<()> {
        let js = self.js;
        let scope = js.callback_scope()?;
        let _running = Running::enter(self.db);
        let (f, this) = self.saved.get(js, &scope, &self.f)?;
        let mut argv = Argv::new();
        args_js(js, &mut argv, args, self.safe_ints)?;
        let result = js.call(f, this, &argv)?;
        set_result(js, result, out, || {
            format!("User-defined function {}() returned", self.name)
        })
    }
}

impl ScalarFunction for JsFunction {
    fn call(&self, args: &[SqlValue], out: &mut ResultSink) {
        if let Err(error) = self.run(args, out) {
            report(self.js, error);
            out.fail(b"");
        }
    }
}

/// `db.function(name, options, fn)`'s native half: `argc` -1 for varargs.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn facade_function(
    env: Env,
    db: u32,
    f: JsVal,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    deterministic: bool,
    direct_only: bool,
) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        not_busy(core)?;
        let (bytes, name) = name_of(&name)?;
        let imp = JsFunction {
            js,
            db,
            _registered: Registered::new(js),
            f: js.keep(f.raw())?,
            saved: ScopeCache::default(),
            name,
            safe_ints,
        };
        let flags = FunctionFlags {
            deterministic,
            direct_only,
        };
        create_scalar(&core.conn, &bytes, argc, flags, imp)
    })
}

/// The cell of `Cells` that holds `start` (a value, or the function that makes one).
const START: u32 = 0;

struct JsAggregate {
    js: Napi,
    /// The connection's handle (busy while this runs).
    db: u32,
    _registered: Registered,
    /// The running value of each group, and `start` in cell START.
    cells: Cells,
    start_is_function: bool,
    step: JsRef,
    saved_step: ScopeCache,
    inverse: Option<JsRef>,
    saved_inverse: ScopeCache,
    result: Option<JsRef>,
    name: String,
    safe_ints: bool,
}

/// A group's running value: a number kept in Rust (a sum, a count: no JS cell to read
/// and write per row), or any other value in a cell of `Cells`.
#[derive(Clone, Copy)]
enum Acc {
    Number(f64),
    Cell(u32),
}

/// One group's accumulator, None once a callback failed (better-sqlite3's empty
/// accumulator: the group's later callbacks do nothing).
struct Group {
    acc: Option<Acc>,
    is_window: bool,
}

impl JsAggregate {
    fn prefix(&self) -> String {
        format!("User-defined function {}() returned", self.name)
    }

    /// better-sqlite3's `GetAccumulator`: the group's value, made on its first callback
    /// from `start` (called when it is a function).
    fn acc(&self, group: &mut Option<Group>) -> SResult<Option<Acc>> {
        if let Some(group) = group {
            return Ok(group.acc);
        }
        let js = self.js;
        let start = self.cells.get(js, START)?;
        let seed = if self.start_is_function {
            js.call(start, js.undefined()?, &[])
        } else {
            Ok(start)
        };
        let made = group.insert(Group {
            acc: None,
            is_window: false,
        });
        made.acc = Some(self.keep(seed?)?);
        Ok(made.acc)
    }

    fn keep(&self, value: Raw) -> SResult<Acc> {
        match self.js.number_value(value) {
            Some(n) => Ok(Acc::Number(n)),
            None => Ok(Acc::Cell(self.cells.put(self.js, value)?)),
        }
    }

    fn acc_js(&self, acc: Acc) -> SResult<Raw> {
        match acc {
            Acc::Number(n) => self.js.number(n),
            Acc::Cell(cell) => self.cells.get(self.js, cell),
        }
    }

    /// The group's value after a step returned `value` (undefined keeps it).
    fn replace(&self, group: &mut Option<Group>, value: Raw) -> SResult<()> {
        let js = self.js;
        let Some(group) = group.as_mut() else {
            return Ok(());
        };
        let Some(acc) = group.acc.as_mut() else {
            return Ok(());
        };
        match (js.number_value(value), *acc) {
            (Some(n), Acc::Number(_)) => *acc = Acc::Number(n),
            (Some(n), Acc::Cell(cell)) => {
                *acc = Acc::Number(n);
                self.cells.release(js, cell);
            }
            (None, _) if JsVal::wrap(js, value)?.is_undefined() => {}
            (None, Acc::Cell(cell)) => self.cells.set(js, cell, value)?,
            (None, Acc::Number(_)) => *acc = Acc::Cell(self.cells.put(js, value)?),
        }
        Ok(())
    }

    fn fail(&self, group: &mut Option<Group>, error: StoreError, out: &mut ResultSink) {
        self.end(group);
        report(self.js, error);
        out.fail(b"");
    }

    fn run_step(&self, group: &mut Option<Group>, args: &[SqlValue], inverse: bool) -> SResult<()> {
        let js = self.js;
        let scope = js.callback_scope()?;
        let _running = Running::enter(self.db);
        let Some(acc) = self.acc(group)? else {
            return Ok(());
        };
        let (f, this) = match (inverse, &self.inverse) {
            (true, Some(inverse)) => self.saved_inverse.get(js, &scope, inverse)?,
            _ => self.saved_step.get(js, &scope, &self.step)?,
        };
        let mut argv = Argv::new();
        argv.push(self.acc_js(acc)?);
        args_js(js, &mut argv, args, self.safe_ints)?;
        let value = js.call(f, this, &argv)?;
        self.replace(group, value)
    }

    fn run_value(&self, group: &mut Option<Group>, is_final: bool, out: &mut ResultSink) -> SResult<()> {
        let js = self.js;
        let _scope = js.callback_scope()?;
        let _running = Running::enter(self.db);
        let Some(acc) = self.acc(group)? else {
            return Ok(());
        };
        let Some(state) = group.as_mut() else {
            return Ok(());
        };
        if !is_final {
            state.is_window = true;
        } else if state.is_window {
            // A window function's last call only ends the group.
            return Ok(());
        }
        let mut value = self.acc_js(acc)?;
        if let Some(result) = &self.result {
            value = js.call(result.get(js)?, js.undefined()?, &[value])?;
        }
        set_result(js, value, out, || self.prefix())
    }

    fn end(&self, group: &mut Option<Group>) {
        if let Some(Acc::Cell(cell)) = group.as_mut().and_then(|g| g.acc.take()) {
            self.cells.release(self.js, cell);
        }
    }
}

impl AggregateFunction for JsAggregate {
    type State = Group;

    fn step(&self, group: &mut Option<Group>, args: &[SqlValue], inverse: bool, out: &mut ResultSink) {
        if let Err(error) = self.run_step(group, args, inverse) {
            self.fail(group, error, out);
        }
    }

    fn value(&self, group: &mut Option<Group>, is_final: bool, out: &mut ResultSink) {
        if let Err(error) = self.run_value(group, is_final, out) {
            self.fail(group, error, out);
        }
        if is_final {
            self.end(group);
        }
    }
}

/// `db.aggregate(name, options)`'s native half: `inverse`/`result` are functions or
/// null, `argc` -1 for varargs; a window function when `inverse` is given.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn facade_aggregate(
    env: Env,
    db: u32,
    start: JsVal,
    step: JsVal,
    inverse: JsVal,
    result: JsVal,
    name: JsVal,
    argc: i32,
    safe_ints: bool,
    deterministic: bool,
    direct_only: bool,
) -> Result<()> {
    let js = Napi::new(env.raw());
    with_handle(&env, db, |core| {
        not_busy(core)?;
        let (bytes, name) = name_of(&name)?;
        let keep_function = |v: &JsVal| -> SResult<Option<JsRef>> {
            if v.is_function() {
                Ok(Some(js.keep(v.raw())?))
            } else {
                Ok(None)
            }
        };
        let cells = Cells::new(js)?;
        cells.put(js, start.raw())?;
        let inverse = keep_function(&inverse)?;
        let window = inverse.is_some();
        let imp = JsAggregate {
            js,
            db,
            _registered: Registered::new(js),
            cells,
            start_is_function: start.is_function(),
            step: js.keep(step.raw())?,
            saved_step: ScopeCache::default(),
            inverse,
            saved_inverse: ScopeCache::default(),
            result: keep_function(&result)?,
            name,
            safe_ints,
        };
        let flags = FunctionFlags {
            deterministic,
            direct_only,
        };
        create_aggregate(&core.conn, &bytes, argc, flags, window, imp)
    })
}
