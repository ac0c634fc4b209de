//! User-defined SQL functions and aggregates (part of `ffi::sqlite`, the one module that
//! calls SQLite's C API): `sqlite3_create_function_v2` and `sqlite3_create_window_function`
//! behind the safe traits [`ScalarFunction`] and [`AggregateFunction`]. SQLite owns each
//! registration's Rust value from then on and drops it through `xDestroy` (when the
//! function is replaced, the connection closes, or the registration fails).

use std::ffi::{c_int, c_void, CString};

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::sqlite_bytes::SqliteBytes;
use super::statement::value_ref;
use super::{db, ok_or_last_error};
use crate::error::StoreError;

/// What a callback says when Rust itself failed (a panic): never an abort.
const PANICKED: &[u8] = b"triflux-native-store internal error: a user callback panicked";

/// Where a function's (or a virtual table column's) result goes.
pub struct ResultSink {
    ctx: *mut ffi::sqlite3_context,
}

impl ResultSink {
    pub(super) fn new(ctx: *mut ffi::sqlite3_context) -> Self {
        ResultSink { ctx }
    }

    /// Sets the result; SQLite copies text and blobs (SQLITE_TRANSIENT).
    pub fn set(&mut self, value: ValueRef<'_>) {
        // SAFETY: `ctx` is the context of the running callback; lengths are passed.
        unsafe {
            match value {
                ValueRef::Null => ffi::sqlite3_result_null(self.ctx),
                ValueRef::Integer(n) => ffi::sqlite3_result_int64(self.ctx, n),
                ValueRef::Real(f) => ffi::sqlite3_result_double(self.ctx, f),
                ValueRef::Text(t) => ffi::sqlite3_result_text64(
                    self.ctx,
                    crate::ffi::bytes_ptr(t).cast(),
                    t.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                ValueRef::Blob(b) => ffi::sqlite3_result_blob64(
                    self.ctx,
                    crate::ffi::bytes_ptr(b),
                    b.len() as u64,
                    ffi::SQLITE_TRANSIENT(),
                ),
            }
        }
    }

    /// Sets a TEXT result SQLite keeps as it is, freeing it with `sqlite3_free` when done
    /// (no copy). SQLite notes for itself that the byte after the text is free to hold
    /// the NUL its C-string readers want.
    pub fn set_text_owned(&mut self, text: SqliteBytes) {
        let (ptr, len) = text.into_raw();
        // SAFETY: `ptr` is SQLite's own allocation, holding `len` bytes of UTF-8 and
        // owned by nobody else; SQLite frees it (at once when it refuses the length).
        unsafe {
            ffi::sqlite3_result_text64(
                self.ctx,
                ptr.cast(),
                len as u64,
                Some(ffi::sqlite3_free),
                ffi::SQLITE_UTF8 as u8,
            )
        };
    }

    /// Fails the statement. With an empty message: a JS exception is pending and is the
    /// error the caller sees (better-sqlite3's `sqlite3_result_error(ctx, "", 0)`).
    pub fn fail(&mut self, message: &[u8]) {
        let len = c_int::try_from(message.len()).unwrap_or(0);
        // SAFETY: `message` is valid for `len` bytes; SQLite copies it.
        unsafe { ffi::sqlite3_result_error(self.ctx, message.as_ptr().cast(), len) };
    }

    fn fail_nomem(&mut self) {
        // SAFETY: as above.
        unsafe { ffi::sqlite3_result_error_nomem(self.ctx) };
    }
}

/// One value handed to a callback by SQLite (an argument, a table's constraint value).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct SqlValue(*mut ffi::sqlite3_value);

impl SqlValue {
    /// The value, borrowed for the callback's duration.
    #[inline]
    pub fn get(&self) -> ValueRef<'_> {
        // SAFETY: SQLite keeps the value alive (and its text/blob pointers valid) for the
        // callback it was passed to; the slices borrow `self`, which lives no longer.
        unsafe { value_ref(self.0) }
    }
}

/// The arguments of one call, as SQLite passes them.
#[inline]
pub fn values<'a>(argc: c_int, argv: *mut *mut ffi::sqlite3_value) -> &'a [SqlValue] {
    match usize::try_from(argc) {
        // SAFETY: SQLite passes `argc` value pointers at `argv`; SqlValue is a transparent
        // pointer wrapper of the same layout, valid for the callback's duration.
        Ok(n) if n > 0 && !argv.is_null() => unsafe { std::slice::from_raw_parts(argv.cast::<SqlValue>(), n) },
        _ => &[],
    }
}

/// A scalar function: called once per invocation with its arguments.
pub trait ScalarFunction: 'static {
    fn call(&self, args: &[SqlValue], out: &mut ResultSink);
}

/// An aggregate (a window function when `inverse` is registered). Its per-group state
/// lives in SQLite's aggregate context from the first callback of the group until the
/// final one, which drops it.
pub trait AggregateFunction: 'static {
    type State: 'static;
    /// `xStep` (`inverse` false) or `xInverse`.
    fn step(&self, state: &mut Option<Self::State>, args: &[SqlValue], inverse: bool, out: &mut ResultSink);
    /// `xValue` (`is_final` false) or `xFinal`.
    fn value(&self, state: &mut Option<Self::State>, is_final: bool, out: &mut ResultSink);
}

/// How a function may be used: better-sqlite3's `deterministic` and `directOnly`.
#[derive(Clone, Copy)]
pub struct FunctionFlags {
    pub deterministic: bool,
    pub direct_only: bool,
}

impl FunctionFlags {
    fn mask(self) -> c_int {
        let mut mask = ffi::SQLITE_UTF8;
        if self.deterministic {
            mask |= ffi::SQLITE_DETERMINISTIC;
        }
        if self.direct_only {
            mask |= ffi::SQLITE_DIRECTONLY;
        }
        mask
    }
}

/// A function's name as C text: SQLite reads it up to the first NUL.
pub(super) fn c_name(name: &[u8]) -> CString {
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    CString::new(&name[..end]).unwrap_or_default()
}

/// Runs a callback body; a panic becomes a failed statement, never an unwind into C.
fn guarded(ctx: *mut ffi::sqlite3_context, body: impl FnOnce(&mut ResultSink)) {
    let mut out = ResultSink::new(ctx);
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut out))).is_err() {
        ResultSink::new(ctx).fail(PANICKED);
    }
}

/// The registration's Rust value, from the context of one of its calls.
///
/// # Safety
/// `ctx` belongs to a call of a function registered with a `Box<T>` as user data.
unsafe fn user_data<'a, T>(ctx: *mut ffi::sqlite3_context) -> &'a T {
    // SAFETY: the caller's promise: the user data is that Box, alive while SQLite keeps
    // the registration, which it does during the call.
    unsafe { &*ffi::sqlite3_user_data(ctx).cast::<T>() }
}

unsafe extern "C" fn destroy<T>(p: *mut c_void) {
    // SAFETY: `p` is the Box<T> handed to SQLite at registration; SQLite destroys it once.
    drop(unsafe { Box::from_raw(p.cast::<T>()) });
}

unsafe extern "C" fn scalar_call<F: ScalarFunction>(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: registered by `create_scalar::<F>`.
    let f = unsafe { user_data::<F>(ctx) };
    guarded(ctx, |out| f.call(values(argc, argv), out));
}

/// `sqlite3_create_function_v2`: registers (or replaces) `name` with `argc` arguments
/// (-1: any number). On failure SQLite has dropped `f`.
pub fn create_scalar<F: ScalarFunction>(
    conn: &Connection,
    name: &[u8],
    argc: c_int,
    flags: FunctionFlags,
    f: F,
) -> Result<(), StoreError> {
    let name = c_name(name);
    let data = Box::into_raw(Box::new(f)).cast::<c_void>();
    // SAFETY: `data` is a Box<F> that SQLite owns from here (xDestroy frees it, also on
    // failure); the callbacks match that type.
    let rc = unsafe {
        ffi::sqlite3_create_function_v2(
            db(conn),
            name.as_ptr(),
            argc,
            flags.mask(),
            data,
            Some(scalar_call::<F>),
            None,
            None,
            Some(destroy::<F>),
        )
    };
    ok_or_last_error(conn, rc)
}

/// The group's state slot in SQLite's aggregate context (a pointer to a boxed
/// `Option<State>`, null until first used), or None when SQLite is out of memory.
///
/// # Safety
/// `ctx` is a call of an aggregate registered by `create_aggregate::<A>` with
/// `A::State = S`.
unsafe fn state_slot<'a, S>(ctx: *mut ffi::sqlite3_context) -> Option<&'a mut *mut Option<S>> {
    let size = c_int::try_from(size_of::<*mut Option<S>>()).ok()?;
    // The context memory is zeroed on first allocation: a null pointer.
    // SAFETY: `ctx` is an aggregate call's context (the caller's promise).
    let p = unsafe { ffi::sqlite3_aggregate_context(ctx, size) }.cast::<*mut Option<S>>();
    if p.is_null() {
        return None;
    }
    // SAFETY: SQLite's context memory for this group, of the size asked, aligned for a
    // pointer, used by no one else.
    let slot = unsafe { &mut *p };
    if slot.is_null() {
        *slot = Box::into_raw(Box::new(None));
    }
    Some(slot)
}

/// # Safety
/// `ctx` is a call of an aggregate registered by `create_aggregate::<A>`, `argv` its
/// `argc` arguments.
unsafe fn aggregate_step<A: AggregateFunction>(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
    inverse: bool,
) {
    // SAFETY: the caller's promise.
    let f = unsafe { user_data::<A>(ctx) };
    // SAFETY: as above.
    let slot = unsafe { state_slot::<A::State>(ctx) };
    guarded(ctx, |out| match slot {
        // SAFETY: the slot holds a live Box made by `state_slot`.
        Some(slot) => f.step(unsafe { &mut **slot }, values(argc, argv), inverse, out),
        None => out.fail_nomem(),
    });
}

unsafe extern "C" fn aggregate_xstep<A: AggregateFunction>(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: SQLite calls this for the aggregate `create_aggregate::<A>` registered.
    unsafe { aggregate_step::<A>(ctx, argc, argv, false) };
}

unsafe extern "C" fn aggregate_xinverse<A: AggregateFunction>(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as above.
    unsafe { aggregate_step::<A>(ctx, argc, argv, true) };
}

/// # Safety
/// `ctx` is a call of an aggregate registered by `create_aggregate::<A>`.
unsafe fn aggregate_value<A: AggregateFunction>(ctx: *mut ffi::sqlite3_context, is_final: bool) {
    // SAFETY: the caller's promise.
    let f = unsafe { user_data::<A>(ctx) };
    // SAFETY: as above.
    let slot = unsafe { state_slot::<A::State>(ctx) }.map(|slot| slot as *mut *mut Option<A::State>);
    guarded(ctx, |out| match slot {
        // SAFETY: the slot holds a live Box made by `state_slot`.
        Some(slot) => f.value(unsafe { &mut **slot }, is_final, out),
        None => out.fail_nomem(),
    });
    if let (Some(slot), true) = (slot, is_final) {
        // SAFETY: the final call of the group: the Box is freed once and the slot cleared.
        drop(unsafe { Box::from_raw(std::mem::replace(&mut *slot, std::ptr::null_mut())) });
    }
}

unsafe extern "C" fn aggregate_xvalue<A: AggregateFunction>(ctx: *mut ffi::sqlite3_context) {
    // SAFETY: SQLite calls this for the aggregate `create_aggregate::<A>` registered.
    unsafe { aggregate_value::<A>(ctx, false) };
}

unsafe extern "C" fn aggregate_xfinal<A: AggregateFunction>(ctx: *mut ffi::sqlite3_context) {
    // SAFETY: as above.
    unsafe { aggregate_value::<A>(ctx, true) };
}

/// `sqlite3_create_window_function`: an aggregate, usable as a window function when
/// `window` (xValue and xInverse registered). On failure SQLite has dropped `f`.
pub fn create_aggregate<A: AggregateFunction>(
    conn: &Connection,
    name: &[u8],
    argc: c_int,
    flags: FunctionFlags,
    window: bool,
    f: A,
) -> Result<(), StoreError> {
    let name = c_name(name);
    let data = Box::into_raw(Box::new(f)).cast::<c_void>();
    type ValueFn = unsafe extern "C" fn(*mut ffi::sqlite3_context);
    type InverseFn = unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);
    let (x_value, x_inverse): (Option<ValueFn>, Option<InverseFn>) = if window {
        (Some(aggregate_xvalue::<A>), Some(aggregate_xinverse::<A>))
    } else {
        (None, None)
    };
    // SAFETY: as in `create_scalar`, with a Box<A>.
    let rc = unsafe {
        ffi::sqlite3_create_window_function(
            db(conn),
            name.as_ptr(),
            argc,
            flags.mask(),
            data,
            Some(aggregate_xstep::<A>),
            Some(aggregate_xfinal::<A>),
            x_value,
            x_inverse,
            Some(destroy::<A>),
        )
    };
    ok_or_last_error(conn, rc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        Connection::open_in_memory().expect("in-memory database")
    }

    const PLAIN: FunctionFlags = FunctionFlags {
        deterministic: false,
        direct_only: false,
    };

    /// Doubles integers; panics on text (a Rust failure inside a callback).
    struct Double;

    impl ScalarFunction for Double {
        fn call(&self, args: &[SqlValue], out: &mut ResultSink) {
            match args[0].get() {
                ValueRef::Integer(n) => out.set(ValueRef::Integer(n * 2)),
                ValueRef::Text(_) => panic!("text"),
                _ => out.fail(b"not a number"),
            }
        }
    }

    #[test]
    fn a_scalar_function_runs_and_its_failures_are_errors() {
        let conn = conn();
        create_scalar(&conn, b"double", 1, PLAIN, Double).unwrap();
        let n: i64 = conn.query_row("SELECT double(21)", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 42);
        let err = conn
            .query_row("SELECT double(1.5)", [], |r| r.get::<_, i64>(0))
            .unwrap_err();
        assert!(err.to_string().contains("not a number"), "{err}");
        // A panic fails the statement; the connection stays usable.
        let err = conn
            .query_row("SELECT double('x')", [], |r| r.get::<_, i64>(0))
            .unwrap_err();
        assert!(err.to_string().contains("a user callback panicked"), "{err}");
        let n: i64 = conn.query_row("SELECT double(2)", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 4);
        let err = conn
            .query_row("SELECT double(1, 2)", [], |r| r.get::<_, i64>(0))
            .unwrap_err();
        assert!(err.to_string().contains("wrong number of arguments"), "{err}");
    }

    #[test]
    fn a_name_is_cut_at_nul_and_a_bad_one_is_sqlites_error() {
        let conn = conn();
        create_scalar(&conn, b"twice\0ignored", 1, PLAIN, Double).unwrap();
        let n: i64 = conn.query_row("SELECT twice(3)", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 6);
        assert!(create_scalar(&conn, &[b'x'; 300], 1, PLAIN, Double).is_err());
    }

    /// Sums integers; records its callbacks in the state.
    struct Sum;

    impl AggregateFunction for Sum {
        type State = (i64, u32);
        fn step(&self, state: &mut Option<(i64, u32)>, args: &[SqlValue], inverse: bool, _out: &mut ResultSink) {
            let (total, calls) = state.get_or_insert((0, 0));
            let ValueRef::Integer(n) = args[0].get() else { return };
            *total += if inverse { -n } else { n };
            *calls += 1;
        }
        fn value(&self, state: &mut Option<(i64, u32)>, _is_final: bool, out: &mut ResultSink) {
            out.set(ValueRef::Integer(state.map_or(-1, |(total, _)| total)));
        }
    }

    #[test]
    fn aggregates_keep_one_state_per_group_and_window_frames_slide() {
        let conn = conn();
        create_aggregate(&conn, b"total", 1, PLAIN, true, Sum).unwrap();
        conn.execute_batch("CREATE TABLE t(g, x); INSERT INTO t VALUES (1, 1), (1, 2), (2, 10), (2, 20), (2, 30);")
            .unwrap();
        let mut stmt = conn.prepare("SELECT g, total(x) FROM t GROUP BY g ORDER BY g").unwrap();
        let groups: Vec<(i64, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(groups, [(1, 3), (2, 60)]);
        // No rows: the final call sees no state.
        let empty: i64 = conn
            .query_row("SELECT total(x) FROM t WHERE 0", [], |r| r.get(0))
            .unwrap();
        assert_eq!(empty, -1);
        let mut stmt = conn
            .prepare("SELECT total(x) OVER (ORDER BY rowid ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t")
            .unwrap();
        let frames: Vec<i64> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(frames, [1, 3, 12, 30, 50]);
    }
}
