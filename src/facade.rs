//! The better-sqlite3-compatible `db` handle: statements prepared by JS callers on the
//! store's own connection, kept prepared in Rust and addressed by id. Rows leave as JSON
//! text (one `JSON.parse` in the glue). The checks, their order and their messages follow
//! better-sqlite3 12 (`Statement::JS_*`, `Database::JS_exec`, `lib/methods/transaction.js`).

use std::ffi::{c_char, c_int, CStr};

use napi::bindgen_prelude::*;
use napi::sys;
use napi::ValueType;
use napi_derive::napi;
use rusqlite::ffi;
use rusqlite::types::ValueRef;

use crate::bind::{bind_args_with, Arg, Bound, ParamInfo, TOO_BIG, TOO_MANY};
use crate::db::{slot_of, with_slot, Core, NativeDb};
use crate::errors::{SResult, StoreError};
use crate::jsval::JsVal;
use crate::rowjson::{escape_into, JsonOut};

/// Row modes, as better-sqlite3's `Data::FLAT/PLUCK/EXPAND/RAW`.
const FLAT: u32 = 0;
const PLUCK: u32 = 1;
const EXPAND: u32 = 2;
const RAW: u32 = 3;

const BUSY: &str = "This database connection is busy executing a query";

/// One statement handed to JS. Finalized when dropped.
struct FStmt {
    handle: *mut ffi::sqlite3_stmt,
    /// `stmt.bind(...)` was called: the bindings are permanent.
    bound: bool,
}

impl Drop for FStmt {
    fn drop(&mut self) {
        unsafe { ffi::sqlite3_finalize(self.handle) };
    }
}

impl ParamInfo for FStmt {
    fn parameter_count(&self) -> usize {
        unsafe { ffi::sqlite3_bind_parameter_count(self.handle) as usize }
    }
    fn parameter_name(&self, index: usize) -> Option<&str> {
        unsafe {
            let p = ffi::sqlite3_bind_parameter_name(self.handle, index as c_int);
            if p.is_null() {
                None
            } else {
                CStr::from_ptr(p).to_str().ok()
            }
        }
    }
}

/// Statements handed to JS, addressed by slot id; plus the count of open iterators.
#[derive(Default)]
pub struct StatementTable {
    slots: Vec<Option<FStmt>>,
    free: Vec<u32>,
    pub iterators: u32,
}

impl StatementTable {
    /// Finalizes every statement (before the connection closes).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.iterators = 0;
    }

    fn insert(&mut self, stmt: FStmt) -> u32 {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = Some(stmt);
            id
        } else {
            self.slots.push(Some(stmt));
            (self.slots.len() - 1) as u32
        }
    }

    fn get(&mut self, id: u32) -> SResult<&mut FStmt> {
        match self.slots.get_mut(id as usize) {
            Some(Some(s)) => Ok(s),
            _ => Err(StoreError::type_error("The statement was finalized")),
        }
    }

    fn remove(&mut self, id: u32) {
        if let Some(slot) = self.slots.get_mut(id as usize) {
            if slot.take().is_some() {
                self.free.push(id);
            }
        }
    }
}

fn db_handle(core: &Core) -> *mut ffi::sqlite3 {
    unsafe { core.conn.handle() }
}

/// better-sqlite3's `ThrowDatabaseError`: the connection's last message and extended code.
fn db_error(db: *mut ffi::sqlite3) -> StoreError {
    unsafe {
        let code = ffi::sqlite3_extended_errcode(db);
        let msg = CStr::from_ptr(ffi::sqlite3_errmsg(db)).to_string_lossy().into_owned();
        StoreError::sqlite(code, msg)
    }
}

/// Steps `h` to the end, writing every row in `mode` as one JSON array, then resets it.
unsafe fn all_rows_json(db: *mut ffi::sqlite3, h: *mut ffi::sqlite3_stmt, mode: u32) -> SResult<String> {
    let mut out = JsonOut::new();
    out.buf.push('[');
    let mut first = true;
    while ffi::sqlite3_step(h) == ffi::SQLITE_ROW {
        if !first {
            out.buf.push(',');
        }
        first = false;
        write_row(&mut out, h, mode);
    }
    out.buf.push(']');
    if ffi::sqlite3_reset(h) == ffi::SQLITE_OK {
        Ok(out.finish())
    } else {
        Err(db_error(db))
    }
}

fn no_iterators(core: &Core) -> SResult<()> {
    if core.facade.iterators > 0 {
        return Err(StoreError::type_error(BUSY));
    }
    Ok(())
}

/// The SQL text as V8's `String::Utf8Value` gives it to SQLite (WTF-8), cut at the first
/// NUL (SQLite stops there) and NUL-terminated.
fn sql_bytes(source: &JsVal) -> Vec<u8> {
    let mut bytes = source.wtf8();
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    bytes.push(0);
    bytes
}

fn is_skipped(c: u8) -> bool {
    c == b' ' || c == b';' || (b'\t'..=b'\r').contains(&c)
}

/// Reads the JS argument list (an array built by the glue's rest parameter).
fn read_args(params: &JsVal) -> SResult<Vec<Arg<'static>>> {
    let len = params.array_len();
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        out.push(Arg::Js(params.element(i)?));
    }
    Ok(out)
}

unsafe fn bind_one(handle: *mut ffi::sqlite3_stmt, index: usize, v: &Bound) -> c_int {
    let i = index as c_int;
    match v {
        Bound::Null => ffi::sqlite3_bind_null(handle, i),
        Bound::Int(n) => ffi::sqlite3_bind_int64(handle, i, *n),
        Bound::Real(f) => ffi::sqlite3_bind_double(handle, i, *f),
        Bound::Text(t) => ffi::sqlite3_bind_text64(
            handle,
            i,
            t.as_ptr() as *const c_char,
            t.len() as u64,
            ffi::SQLITE_TRANSIENT(),
            ffi::SQLITE_UTF8 as u8,
        ),
        Bound::Blob(b) => ffi::sqlite3_bind_blob64(
            handle,
            i,
            if b.is_empty() { c"".as_ptr().cast() } else { b.as_ptr().cast() },
            b.len() as u64,
            ffi::SQLITE_TRANSIENT(),
        ),
    }
}

/// better-sqlite3's `Binder::Bind` on the statement (after `sqlite3_clear_bindings`).
fn bind_params(stmt: &FStmt, params: &JsVal) -> SResult<()> {
    let args = read_args(params)?;
    let values = bind_args_with(stmt, &args)?;
    unsafe {
        // Bindings are already clear: `finish` clears them after every call.
        for (index, v) in &values {
            let rc = bind_one(stmt.handle, *index, v);
            if rc != ffi::SQLITE_OK {
                ffi::sqlite3_clear_bindings(stmt.handle);
                return Err(match rc {
                    ffi::SQLITE_TOOBIG => StoreError::range_error(TOO_BIG),
                    ffi::SQLITE_RANGE => StoreError::range_error(TOO_MANY),
                    ffi::SQLITE_NOMEM => StoreError::error("Out of memory"),
                    _ => StoreError::error("An unexpected error occured while trying to bind parameters"),
                });
            }
        }
    }
    Ok(())
}

/// `STATEMENT_START_LOGIC`'s binding part: bind the call's arguments unless `bind()` was used.
fn start(stmt: &FStmt, params: &JsVal) -> SResult<()> {
    if !stmt.bound {
        bind_params(stmt, params)
    } else if params.array_len() > 0 {
        Err(StoreError::type_error("This statement already has bound parameters"))
    } else {
        Ok(())
    }
}

fn finish(stmt: &FStmt) {
    if !stmt.bound {
        unsafe { ffi::sqlite3_clear_bindings(stmt.handle) };
    }
}

unsafe fn write_value(out: &mut JsonOut, h: *mut ffi::sqlite3_stmt, i: c_int) {
    match ffi::sqlite3_column_type(h, i) {
        ffi::SQLITE_INTEGER => out.value(ValueRef::Integer(ffi::sqlite3_column_int64(h, i))),
        ffi::SQLITE_FLOAT => {
            let v = ffi::sqlite3_column_double(h, i);
            if v == 0.0 && v.is_sign_negative() {
                out.raw("-0");
            } else {
                out.num(v);
            }
        }
        ffi::SQLITE_TEXT => {
            let p = ffi::sqlite3_column_text(h, i);
            let n = ffi::sqlite3_column_bytes(h, i) as usize;
            let bytes = if p.is_null() { &[][..] } else { std::slice::from_raw_parts(p, n) };
            out.text_bytes(bytes);
        }
        ffi::SQLITE_BLOB => {
            let p = ffi::sqlite3_column_blob(h, i);
            let n = ffi::sqlite3_column_bytes(h, i) as usize;
            let bytes = if p.is_null() { &[][..] } else { std::slice::from_raw_parts(p as *const u8, n) };
            out.value(ValueRef::Blob(bytes));
        }
        _ => out.null(),
    }
}

unsafe fn cstr_lossy<'a>(p: *const c_char) -> std::borrow::Cow<'a, str> {
    if p.is_null() {
        std::borrow::Cow::Borrowed("")
    } else {
        CStr::from_ptr(p).to_string_lossy()
    }
}

/// The current row in the given mode (better-sqlite3's `Data::GetRowJS`).
unsafe fn write_row(out: &mut JsonOut, h: *mut ffi::sqlite3_stmt, mode: u32) {
    let n = ffi::sqlite3_column_count(h);
    match mode {
        PLUCK => write_value(out, h, 0),
        RAW => {
            out.buf.push('[');
            for i in 0..n {
                if i > 0 {
                    out.buf.push(',');
                }
                write_value(out, h, i);
            }
            out.buf.push(']');
        }
        EXPAND => {
            // Tables in order of first appearance; "$" for expressions.
            let mut tables: Vec<(std::borrow::Cow<'_, str>, Vec<c_int>)> = Vec::new();
            for i in 0..n {
                let t = ffi::sqlite3_column_table_name(h, i);
                let t = if t.is_null() { std::borrow::Cow::Borrowed("$") } else { cstr_lossy(t) };
                match tables.iter_mut().find(|(name, _)| *name == t) {
                    Some((_, cols)) => cols.push(i),
                    None => tables.push((t, vec![i])),
                }
            }
            out.buf.push('{');
            let mut first = true;
            for (table, cols) in &tables {
                out.key(&mut first, table);
                out.buf.push('{');
                let mut f2 = true;
                for &i in cols {
                    out.key(&mut f2, &cstr_lossy(ffi::sqlite3_column_name(h, i)));
                    write_value(out, h, i);
                }
                out.buf.push('}');
            }
            out.buf.push('}');
        }
        _ => {
            out.buf.push('{');
            for i in 0..n {
                if i > 0 {
                    out.buf.push(',');
                }
                escape_into(&mut out.buf, &cstr_lossy(ffi::sqlite3_column_name(h, i)));
                out.buf.push(':');
                write_value(out, h, i);
            }
            out.buf.push('}');
        }
    }
}

/// Prepares one statement like better-sqlite3's `Statement::JS_new`. Returns the handle
/// and whether it returns data.
fn prepare_one(core: &Core, source: &JsVal, pragma: bool) -> SResult<(*mut ffi::sqlite3_stmt, bool)> {
    if pragma {
        no_iterators(core)?;
    }
    let db = db_handle(core);
    let sql = sql_bytes(source);
    let mut handle = std::ptr::null_mut();
    let mut tail: *const c_char = std::ptr::null();
    let flags = if pragma { 0 } else { ffi::SQLITE_PREPARE_PERSISTENT };
    let rc = unsafe {
        ffi::sqlite3_prepare_v3(db, sql.as_ptr().cast(), sql.len() as c_int, flags, &mut handle, &mut tail)
    };
    if rc != ffi::SQLITE_OK {
        return Err(db_error(db));
    }
    if handle.is_null() {
        return Err(StoreError::range_error("The supplied SQL string contains no statements"));
    }
    // Only whitespace, semicolons and comments may follow the statement.
    let start = sql.as_ptr() as usize;
    let mut i = (tail as usize).saturating_sub(start);
    let b = &sql[..sql.len() - 1];
    while i < b.len() {
        let c = b[i];
        if is_skipped(c) {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() {
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    i += 2;
                    break;
                }
                i += 1;
            }
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i += 2;
            while i < b.len() {
                i += 1;
                if b[i - 1] == b'\n' {
                    break;
                }
            }
        } else {
            unsafe { ffi::sqlite3_finalize(handle) };
            return Err(StoreError::range_error("The supplied SQL string contains more than one statement"));
        }
    }
    let returns_data = unsafe { ffi::sqlite3_column_count(handle) } >= 1 || pragma;
    Ok((handle, returns_data))
}

thread_local! {
    /// The glue's `Float64Array(1)` that receives `lastInsertRowid` (kept alive by a reference).
    static RUN_SHARED: std::cell::Cell<(*mut f64, sys::napi_ref)> = const { std::cell::Cell::new((std::ptr::null_mut(), std::ptr::null_mut())) };
}

/// Registers the Float64Array(1) that facadeRun writes lastInsertRowid into.
fn share_run_buffer(env: Env, buffer: JsVal) -> Result<()> {
    unsafe {
        let mut is_typed = false;
        sys::napi_is_typedarray(env.raw(), buffer.raw(), &mut is_typed);
        let mut ty = 0;
        let mut length = 0usize;
        let mut data = std::ptr::null_mut();
        let mut arraybuffer = std::ptr::null_mut();
        let mut offset = 0usize;
        if !is_typed
            || sys::napi_get_typedarray_info(env.raw(), buffer.raw(), &mut ty, &mut length, &mut data, &mut arraybuffer, &mut offset)
                != sys::Status::napi_ok
            || ty != sys::TypedarrayType::float64_array
            || length < 1
            || data.is_null()
        {
            return Err(Error::from_reason("expected a Float64Array of length 1"));
        }
        let mut reference = std::ptr::null_mut();
        sys::napi_create_reference(env.raw(), buffer.raw(), 1, &mut reference);
        RUN_SHARED.with(|c| {
            let (_, old) = c.replace((data as *mut f64, reference));
            if !old.is_null() {
                sys::napi_delete_reference(env.raw(), old);
            }
        });
    }
    Ok(())
}

/// `run()`'s `{ changes, lastInsertRowid }`: changes returned, the rowid to the shared buffer.
struct RunResult {
    changes: u32,
    last_insert_rowid: f64,
}

fn run_stmt(core: &mut Core, id: u32, params: &JsVal) -> SResult<RunResult> {
    no_iterators(core)?;
    let db = db_handle(core);
    let stmt = core.facade.get(id)?;
    start(stmt, params)?;
    let h = stmt.handle;
    let result = unsafe {
        let before = ffi::sqlite3_total_changes64(db);
        ffi::sqlite3_step(h);
        if ffi::sqlite3_reset(h) == ffi::SQLITE_OK {
            let changes = if ffi::sqlite3_total_changes64(db) == before { 0 } else { ffi::sqlite3_changes64(db) };
            Ok(RunResult { changes: changes as u32, last_insert_rowid: ffi::sqlite3_last_insert_rowid(db) as f64 })
        } else {
            Err(db_error(db))
        }
    };
    finish(stmt);
    result
}

fn all_stmt(core: &mut Core, id: u32, mode: u32, params: &JsVal) -> SResult<String> {
    let db = db_handle(core);
    let stmt = core.facade.get(id)?;
    start(stmt, params)?;
    let h = stmt.handle;
    let result = unsafe {
        all_rows_json(db, h, mode)
    };
    finish(stmt);
    result
}

/// `Database::JS_exec`: every statement of the script in turn.
fn exec_script(core: &Core, source: &JsVal) -> SResult<()> {
    no_iterators(core)?;
    let db = db_handle(core);
    let sql = sql_bytes(source);
    let end = sql.as_ptr() as usize + sql.len() - 1;
    let mut p: *const c_char = sql.as_ptr().cast();
    let mut status;
    loop {
        while (p as usize) < end && is_skipped(unsafe { *p } as u8) {
            p = unsafe { p.add(1) };
        }
        let mut handle = std::ptr::null_mut();
        let mut tail: *const c_char = std::ptr::null();
        status = unsafe { ffi::sqlite3_prepare_v2(db, p, -1, &mut handle, &mut tail) };
        p = tail;
        if handle.is_null() {
            break;
        }
        unsafe {
            loop {
                status = ffi::sqlite3_step(handle);
                if status != ffi::SQLITE_ROW {
                    break;
                }
            }
            status = ffi::sqlite3_finalize(handle);
        }
        if status != ffi::SQLITE_OK {
            break;
        }
    }
    if status != ffi::SQLITE_OK {
        return Err(db_error(db));
    }
    Ok(())
}

fn run_control(core: &Core, sql: &str) -> SResult<()> {
    let mut stmt = core.conn.prepare_cached(sql)?;
    stmt.raw_execute()?;
    Ok(())
}

const SAVEPOINT: &str = "SAVEPOINT `\t_bs3.\t`";
const RELEASE: &str = "RELEASE `\t_bs3.\t`";
const ROLLBACK_TO: &str = "ROLLBACK TO `\t_bs3.\t`";

/// Runs `f` on the connection behind `handle` (see `db::Slot`).
fn with_handle<T>(env: &Env, handle: u32, f: impl FnOnce(&mut Core) -> SResult<T>) -> Result<T> {
    match slot_of(handle) {
        Some(slot) => with_slot(&slot, env, f),
        None => Err(StoreError::not_open().throw(env.raw())),
    }
}

/// `stmt.run(...params)` on connection `db`: returns `changes`; `lastInsertRowid` goes
/// to the shared Float64Array.
#[napi]
pub fn facade_run(env: Env, db: u32, id: u32, params: JsVal) -> Result<u32> {
    let r = with_handle(&env, db, |core| run_stmt(core, id, &params))?;
    RUN_SHARED.with(|c| {
        let (p, _) = c.get();
        if !p.is_null() {
            unsafe { *p = r.last_insert_rowid };
        }
    });
    Ok(r.changes)
}

/// A JS value made by hand (napi's own conversion is skipped).
pub struct RawValue(sys::napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl TypeName for RawValue {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

/// Column `i` of the current row as better-sqlite3 returns it (`Data::GetValueJS`).
unsafe fn value_js(env: sys::napi_env, h: *mut ffi::sqlite3_stmt, i: c_int) -> sys::napi_value {
    let mut out = std::ptr::null_mut();
    match ffi::sqlite3_column_type(h, i) {
        ffi::SQLITE_INTEGER | ffi::SQLITE_FLOAT => {
            sys::napi_create_double(env, ffi::sqlite3_column_double(h, i), &mut out);
        }
        ffi::SQLITE_TEXT => {
            let p = ffi::sqlite3_column_text(h, i);
            let n = ffi::sqlite3_column_bytes(h, i);
            // V8 decodes the bytes exactly as better-sqlite3's StringFromUtf8 does.
            sys::napi_create_string_utf8(env, if p.is_null() { c"".as_ptr() } else { p.cast() }, n as isize, &mut out);
        }
        ffi::SQLITE_BLOB => {
            let p = ffi::sqlite3_column_blob(h, i);
            let n = ffi::sqlite3_column_bytes(h, i) as usize;
            let mut data = std::ptr::null_mut();
            sys::napi_create_buffer_copy(env, n, if p.is_null() { c"".as_ptr().cast() } else { p }, &mut data, &mut out);
        }
        _ => {
            sys::napi_get_null(env, &mut out);
        }
    }
    out
}

/// The current row as a JS object or array, built through napi (FLAT and RAW modes).
/// Keys are set one by one like better-sqlite3 on Node 20 (`row->Set`): a duplicate
/// column name keeps its first position and the last value.
unsafe fn row_js(env: sys::napi_env, h: *mut ffi::sqlite3_stmt, mode: u32) -> sys::napi_value {
    let n = ffi::sqlite3_column_count(h);
    let mut row = std::ptr::null_mut();
    if mode == RAW {
        sys::napi_create_array_with_length(env, n as usize, &mut row);
        for i in 0..n {
            sys::napi_set_element(env, row, i as u32, value_js(env, h, i));
        }
    } else {
        sys::napi_create_object(env, &mut row);
        for i in 0..n {
            let name = ffi::sqlite3_column_name(h, i);
            let mut key = std::ptr::null_mut();
            sys::napi_create_string_utf8(env, if name.is_null() { c"".as_ptr() } else { name }, -1, &mut key);
            sys::napi_set_property(env, row, key, value_js(env, h, i));
        }
    }
    row
}

/// `stmt.get(...params)`: a plucked value as itself, a row as JSON text, or `undefined`
/// when there is no row.
#[napi]
pub fn facade_get(env: Env, db: u32, id: u32, mode: u32, params: JsVal) -> Result<RawValue> {
    let raw_env = env.raw();
    with_handle(&env, db, |core| {
        let db_h = db_handle(core);
        let stmt = core.facade.get(id)?;
        start(stmt, &params)?;
        let h = stmt.handle;
        let result = unsafe {
            match ffi::sqlite3_step(h) {
                ffi::SQLITE_ROW => {
                    let v = if mode == PLUCK {
                        value_js(raw_env, h, 0)
                    } else if mode != EXPAND {
                        row_js(raw_env, h, mode)
                    } else {
                        let mut out = JsonOut::new();
                        write_row(&mut out, h, mode);
                        let text = out.finish();
                        let mut v = std::ptr::null_mut();
                        sys::napi_create_string_utf8(raw_env, text.as_ptr().cast(), text.len() as isize, &mut v);
                        v
                    };
                    ffi::sqlite3_reset(h);
                    Ok(RawValue(v))
                }
                ffi::SQLITE_DONE => {
                    ffi::sqlite3_reset(h);
                    let mut v = std::ptr::null_mut();
                    sys::napi_get_undefined(raw_env, &mut v);
                    Ok(RawValue(v))
                }
                _ => {
                    ffi::sqlite3_reset(h);
                    Err(db_error(db_h))
                }
            }
        };
        finish(stmt);
        result
    })
}

/// `stmt.all(...params)` as a JSON array.
#[napi]
pub fn facade_all(env: Env, db: u32, id: u32, mode: u32, params: JsVal) -> Result<String> {
    with_handle(&env, db, |core| all_stmt(core, id, mode, &params))
}

/// `db.prepare(source)`: returns `id * 4 + reader * 2 + readonly`.
#[napi]
pub fn facade_prepare(env: Env, db: u32, source: JsVal) -> Result<f64> {
    with_handle(&env, db, |core| prepare_stmt(core, &source))
}

fn prepare_stmt(core: &mut Core, source: &JsVal) -> SResult<f64> {
    let (handle, returns_data) = prepare_one(core, source, false)?;
    let readonly = unsafe { ffi::sqlite3_stmt_readonly(handle) } != 0;
    let id = core.facade.insert(FStmt { handle, bound: false });
    Ok(id as f64 * 4.0 + if returns_data { 2.0 } else { 0.0 } + if readonly { 1.0 } else { 0.0 })
}

#[napi]
impl NativeDb {
    /// Finalizes a statement whose JS object was collected (no-op once closed).
    #[napi]
    pub fn facade_finalize(&self, id: u32) {
        if let Ok(mut slot) = self.inner_mut() {
            if let Some(core) = slot.as_mut() {
                core.facade.remove(id);
            }
        }
    }

    /// Registers the Float64Array(1) that facadeRun writes lastInsertRowid into.
    #[napi]
    pub fn facade_share_run_slot(&self, env: Env, buffer: JsVal) -> Result<()> {
        share_run_buffer(env, buffer)
    }

    /// `stmt.bind(...params)`: permanent bindings.
    #[napi]
    pub fn facade_bind(&self, env: Env, id: u32, params: JsVal) -> Result<()> {
        self.with(&env, |core| {
            let stmt = core.facade.get(id)?;
            bind_params(stmt, &params)?;
            stmt.bound = true;
            Ok(())
        })
    }

    /// Starts `stmt.iterate(...params)`: binds and counts an open iterator.
    #[napi]
    pub fn facade_iter_start(&self, env: Env, id: u32, params: JsVal) -> Result<()> {
        self.with(&env, |core| {
            if core.facade.iterators == u16::MAX as u32 {
                return Err(StoreError::range_error("Too many active database iterators"));
            }
            let stmt = core.facade.get(id)?;
            start(stmt, &params)?;
            core.facade.iterators += 1;
            Ok(())
        })
    }

    /// The next row as JSON, or "" at the end (the iterator is then closed).
    #[napi]
    pub fn facade_iter_next(&self, env: Env, id: u32, mode: u32) -> Result<String> {
        self.with(&env, |core| {
            let db = db_handle(core);
            let stmt = core.facade.get(id)?;
            let h = stmt.handle;
            let status = unsafe { ffi::sqlite3_step(h) };
            if status == ffi::SQLITE_ROW {
                let mut out = JsonOut::new();
                unsafe { write_row(&mut out, h, mode) };
                return Ok(out.finish());
            }
            unsafe { ffi::sqlite3_reset(h) };
            finish(stmt);
            core.facade.iterators -= 1;
            if status == ffi::SQLITE_DONE {
                Ok(String::new())
            } else {
                Err(db_error(db))
            }
        })
    }

    /// Closes an iterator early (`return()` / `break`).
    #[napi]
    pub fn facade_iter_return(&self, env: Env, id: u32) -> Result<()> {
        self.with(&env, |core| {
            let stmt = core.facade.get(id)?;
            unsafe { ffi::sqlite3_reset(stmt.handle) };
            finish(stmt);
            core.facade.iterators -= 1;
            Ok(())
        })
    }

    /// `stmt.columns()` as JSON.
    #[napi]
    pub fn facade_columns(&self, env: Env, id: u32) -> Result<String> {
        self.with(&env, |core| {
            let h = core.facade.get(id)?.handle;
            let mut out = JsonOut::new();
            out.buf.push('[');
            unsafe {
                let n = ffi::sqlite3_column_count(h);
                for i in 0..n {
                    if i > 0 {
                        out.buf.push(',');
                    }
                    let fields: [(&str, *const c_char); 5] = [
                        ("name", ffi::sqlite3_column_name(h, i)),
                        ("column", ffi::sqlite3_column_origin_name(h, i)),
                        ("table", ffi::sqlite3_column_table_name(h, i)),
                        ("database", ffi::sqlite3_column_database_name(h, i)),
                        ("type", ffi::sqlite3_column_decltype(h, i)),
                    ];
                    out.buf.push('{');
                    let mut first = true;
                    for (key, p) in fields {
                        out.key(&mut first, key);
                        if p.is_null() {
                            out.null();
                        } else {
                            out.str(&cstr_lossy(p));
                        }
                    }
                    out.buf.push('}');
                }
            }
            out.buf.push(']');
            Ok(out.finish())
        })
    }

    /// `db.exec(source)`.
    #[napi]
    pub fn facade_exec(&self, env: Env, source: JsVal) -> Result<()> {
        self.with(&env, |core| exec_script(core, &source))
    }

    /// `db.pragma(source, { simple })`: JSON of `pluck().get()` ("" = undefined) or `all()`.
    #[napi]
    pub fn facade_pragma(&self, env: Env, source: JsVal, simple: bool) -> Result<String> {
        self.with(&env, |core| {
            let (handle, _) = prepare_one(core, &source, true)?;
            let db = db_handle(core);
            let stmt = FStmt { handle, bound: false };
            let h = stmt.handle;
            unsafe {
                if simple {
                    match ffi::sqlite3_step(h) {
                        ffi::SQLITE_ROW => {
                            let mut out = JsonOut::new();
                            write_row(&mut out, h, PLUCK);
                            Ok(out.finish())
                        }
                        ffi::SQLITE_DONE => Ok(String::new()),
                        _ => {
                            ffi::sqlite3_reset(h);
                            Err(db_error(db))
                        }
                    }
                } else {
                    all_rows_json(db, h, FLAT)
                }
            }
        })
    }

    /// Opens a transaction for `db.transaction(fn)`: `BEGIN [mode]`, or a savepoint when
    /// one is already open. Returns whether it was a savepoint.
    #[napi]
    pub fn tx_begin(&self, env: Env, mode: u32) -> Result<bool> {
        self.with(&env, |core| {
            no_iterators(core)?;
            if !core.conn.is_autocommit() {
                run_control(core, SAVEPOINT)?;
                return Ok(true);
            }
            let sql = match mode {
                1 => "BEGIN DEFERRED",
                2 => "BEGIN IMMEDIATE",
                3 => "BEGIN EXCLUSIVE",
                _ => "BEGIN",
            };
            run_control(core, sql)?;
            Ok(false)
        })
    }

    /// Commits (or releases the savepoint of) a `db.transaction(fn)` call.
    #[napi]
    pub fn tx_commit(&self, env: Env, nested: bool) -> Result<()> {
        self.with(&env, |core| {
            no_iterators(core)?;
            run_control(core, if nested { RELEASE } else { "COMMIT" })
        })
    }

    /// Undoes a `db.transaction(fn)` call after a throw, if SQLite still has it open.
    #[napi]
    pub fn tx_rollback(&self, env: Env, nested: bool) -> Result<()> {
        self.with(&env, |core| {
            if core.conn.is_autocommit() {
                return Ok(());
            }
            no_iterators(core)?;
            if nested {
                run_control(core, ROLLBACK_TO)?;
                run_control(core, RELEASE)
            } else {
                run_control(core, "ROLLBACK")
            }
        })
    }
}

