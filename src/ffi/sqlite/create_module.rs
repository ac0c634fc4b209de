//! Read-only virtual tables (part of `ffi::sqlite`, the one module that calls SQLite's C
//! API): `sqlite3_create_module_v2` behind the safe traits [`TableModule`] and
//! [`VirtualTable`]. The query planning is better-sqlite3's: a table's parameters are
//! hidden columns that only `=` may constrain, each handed to the scan (`xFilter`) in
//! parameter order, and plans that would leave one out are refused.

use std::ffi::{c_char, c_int, c_void, CStr};

use rusqlite::ffi;
use rusqlite::Connection;

use super::create_function::{c_name, ResultSink, SqlValue};
use super::{db, ok_or_last_error};
use crate::error::StoreError;

/// A module: makes a table for each `CREATE VIRTUAL TABLE` (or for the eponymous table).
pub trait TableModule: 'static {
    type Table: VirtualTable;
    /// `args`: SQLite's module arguments (module name, database, table name, then the
    /// arguments in parentheses). `Err(None)`: a JS exception is pending.
    fn connect(&self, args: &[&[u8]]) -> Result<TableDecl<Self::Table>, Option<String>>;
}

/// A table as `xConnect` declares it.
pub struct TableDecl<T> {
    /// `CREATE TABLE x(...)`, parameters first as HIDDEN columns.
    pub sql: Vec<u8>,
    pub direct_only: bool,
    pub table: T,
}

/// A table's scans. A callback that fails returns `Err(())` with a JS exception pending.
pub trait VirtualTable: 'static {
    type Cursor: 'static;
    fn parameter_names(&self) -> &[String];
    fn open(&self) -> Self::Cursor;
    /// Starts a scan: `args[i]` is parameter i's value, None where the query gives none.
    fn filter(&self, cursor: &mut Self::Cursor, args: &[Option<SqlValue>]) -> Result<(), ()>;
    fn next(&self, cursor: &mut Self::Cursor) -> Result<(), ()>;
    fn eof(&self, cursor: &Self::Cursor) -> bool;
    fn column(&self, cursor: &Self::Cursor, column: usize, out: &mut ResultSink) -> Result<(), ()>;
    fn rowid(&self, cursor: &Self::Cursor) -> i64;
}

#[repr(C)]
struct ModuleBox<M> {
    module: ffi::sqlite3_module,
    imp: M,
}

#[repr(C)]
struct TableBox<T> {
    base: ffi::sqlite3_vtab,
    table: T,
    /// Returned by xCreate rather than xConnect. Never read: writing it keeps the two
    /// functions distinct, which SQLite requires of a module that is not eponymous
    /// (identical functions may be merged into one address by the optimizer).
    #[allow(dead_code)]
    created: bool,
}

#[repr(C)]
struct CursorBox<C> {
    base: ffi::sqlite3_vtab_cursor,
    cursor: C,
}

const PANICKED: &CStr = c"triflux-native-store internal error: a virtual table callback panicked";

/// A message SQLite frees itself (`sqlite3_mprintf`).
fn sqlite_message(text: &[u8]) -> *mut c_char {
    let text = c_name(text);
    // SAFETY: "%s" with a NUL-terminated string.
    unsafe { ffi::sqlite3_mprintf(c"%s".as_ptr(), text.as_ptr()) }
}

/// Runs a callback body that returns a status; a panic becomes SQLITE_ERROR.
fn guarded(body: impl FnOnce() -> c_int, on_panic: impl FnOnce(*mut c_char)) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(rc) => rc,
        Err(_) => {
            on_panic(sqlite_message(PANICKED.to_bytes()));
            ffi::SQLITE_ERROR
        }
    }
}

/// Stores `message` as a table's error text, freeing the previous one.
///
/// # Safety
/// `vtab` is a live table of this module.
unsafe fn set_table_error(vtab: *mut ffi::sqlite3_vtab, message: *mut c_char) {
    // SAFETY: the caller's promise; the previous text is NULL or SQLite's allocation.
    unsafe {
        ffi::sqlite3_free((*vtab).zErrMsg.cast());
        (*vtab).zErrMsg = message;
    }
}

fn status(result: Result<(), ()>) -> c_int {
    if result.is_ok() {
        ffi::SQLITE_OK
    } else {
        ffi::SQLITE_ERROR
    }
}

unsafe extern "C" fn x_create<M: TableModule>(
    conn: *mut ffi::sqlite3,
    aux: *mut c_void,
    argc: c_int,
    argv: *const *const c_char,
    out: *mut *mut ffi::sqlite3_vtab,
    err: *mut *mut c_char,
) -> c_int {
    // SAFETY: SQLite's xCreate arguments for this module, passed on as they are.
    unsafe { connect::<M>(conn, aux, argc, argv, out, err, true) }
}

unsafe extern "C" fn x_connect<M: TableModule>(
    conn: *mut ffi::sqlite3,
    aux: *mut c_void,
    argc: c_int,
    argv: *const *const c_char,
    out: *mut *mut ffi::sqlite3_vtab,
    err: *mut *mut c_char,
) -> c_int {
    // SAFETY: SQLite's xConnect arguments for this module, passed on as they are.
    unsafe { connect::<M>(conn, aux, argc, argv, out, err, false) }
}

/// xCreate and xConnect: the module's table for one `CREATE VIRTUAL TABLE` (or use).
///
/// # Safety
/// The arguments are SQLite's for an xCreate or xConnect of this module.
#[allow(clippy::too_many_arguments)]
unsafe fn connect<M: TableModule>(
    conn: *mut ffi::sqlite3,
    aux: *mut c_void,
    argc: c_int,
    argv: *const *const c_char,
    out: *mut *mut ffi::sqlite3_vtab,
    err: *mut *mut c_char,
    created: bool,
) -> c_int {
    // SAFETY: `aux` is the ModuleBox<M> registered with this module.
    let module = unsafe { &*aux.cast::<ModuleBox<M>>() };
    let args: Vec<&[u8]> = (0..usize::try_from(argc).unwrap_or(0))
        // SAFETY: SQLite passes `argc` NUL-terminated strings.
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_bytes())
        .collect();
    let table_name = args.get(2).copied().unwrap_or_default().to_vec();
    let body = || -> c_int {
        let decl = match module.imp.connect(&args) {
            Ok(decl) => decl,
            Err(message) => {
                if let Some(message) = message {
                    // SAFETY: SQLite's out-pointer for this call's error text.
                    unsafe { *err = sqlite_message(message.as_bytes()) };
                }
                return ffi::SQLITE_ERROR;
            }
        };
        let sql = c_name(&decl.sql);
        // SAFETY: `conn` is the connection of this xConnect; `sql` is NUL-terminated.
        if unsafe { ffi::sqlite3_declare_vtab(conn, sql.as_ptr()) } != ffi::SQLITE_OK {
            let text = [b"failed to declare virtual table \"", &table_name[..], b"\""].concat();
            // SAFETY: SQLite's out-pointer for this call's error text.
            unsafe { *err = sqlite_message(&text) };
            return ffi::SQLITE_ERROR;
        }
        // SAFETY: as above; a configuration SQLite allows inside xConnect.
        if decl.direct_only && unsafe { ffi::sqlite3_vtab_config(conn, ffi::SQLITE_VTAB_DIRECTONLY) } != ffi::SQLITE_OK
        {
            let text = [b"failed to configure virtual table \"", &table_name[..], b"\""].concat();
            // SAFETY: as above.
            unsafe { *err = sqlite_message(&text) };
            return ffi::SQLITE_ERROR;
        }
        let table = Box::new(TableBox {
            base: ffi::sqlite3_vtab {
                pModule: std::ptr::null(),
                nRef: 0,
                zErrMsg: std::ptr::null_mut(),
            },
            table: decl.table,
            created,
        });
        // SAFETY: SQLite's out-pointer for the new table, which it owns from here.
        unsafe { *out = Box::into_raw(table).cast() };
        ffi::SQLITE_OK
    };
    // SAFETY: on the panic path, `err` is still SQLite's out-pointer for this call.
    guarded(body, |message| unsafe { *err = message })
}

unsafe extern "C" fn x_disconnect<M: TableModule>(vtab: *mut ffi::sqlite3_vtab) -> c_int {
    // SAFETY: made by x_connect as a TableBox; SQLite disconnects it once.
    let table = unsafe { Box::from_raw(vtab.cast::<TableBox<M::Table>>()) };
    // SAFETY: NULL or an error text SQLite allocated.
    unsafe { ffi::sqlite3_free(table.base.zErrMsg.cast()) };
    drop(table);
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_best_index<M: TableModule>(
    vtab: *mut ffi::sqlite3_vtab,
    info: *mut ffi::sqlite3_index_info,
) -> c_int {
    // SAFETY: a table of this module; `info` is SQLite's planning record for this call,
    // with `nConstraint` entries in both arrays.
    let (table, info) = unsafe { (&(*vtab.cast::<TableBox<M::Table>>()).table, &mut *info) };
    let names = table.parameter_names();
    let count = usize::try_from(info.nConstraint).unwrap_or(0);
    let constraints = if count == 0 {
        &[][..]
    } else {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(info.aConstraint, count) }
    };
    // (parameter, constraint index) of every usable `=` on a parameter.
    let mut forwarded: Vec<(usize, usize)> = Vec::new();
    for (i, item) in constraints.iter().enumerate() {
        let op = c_int::from(item.op);
        // LIMIT and OFFSET have no column.
        if op == ffi::SQLITE_INDEX_CONSTRAINT_LIMIT || op == ffi::SQLITE_INDEX_CONSTRAINT_OFFSET {
            continue;
        }
        let Some(parameter) = usize::try_from(item.iColumn).ok().filter(|&c| c < names.len()) else {
            continue;
        };
        if op != ffi::SQLITE_INDEX_CONSTRAINT_EQ {
            let text = [
                b"virtual table parameter \"",
                names[parameter].as_bytes(),
                b"\" can only be constrained by the '=' operator",
            ]
            .concat();
            // SAFETY: a table of this module.
            unsafe { set_table_error(vtab, sqlite_message(&text)) };
            return ffi::SQLITE_ERROR;
        }
        // A plan that ignores an argument would show the scan `undefined` for it.
        if item.usable == 0 {
            return ffi::SQLITE_CONSTRAINT;
        }
        forwarded.push((parameter, i));
    }
    forwarded.sort_unstable();
    let usage = if count == 0 {
        &mut [][..]
    } else {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(info.aConstraintUsage, count) }
    };
    let mut argument_count: c_int = 0;
    for (parameter, i) in forwarded {
        let bit = 1 << parameter;
        if info.idxNum & bit == 0 {
            info.idxNum |= bit;
            argument_count += 1;
            usage[i].argvIndex = argument_count;
            usage[i].omit = 1;
        }
    }
    // A high cost keeps SQLite from running the scan inside a loop when it can avoid it.
    let estimate = 1_000_000_000 / (argument_count + 1);
    info.estimatedCost = f64::from(estimate);
    info.estimatedRows = i64::from(estimate);
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_open<M: TableModule>(
    vtab: *mut ffi::sqlite3_vtab,
    out: *mut *mut ffi::sqlite3_vtab_cursor,
) -> c_int {
    // SAFETY: a table of this module.
    let table = unsafe { &(*vtab.cast::<TableBox<M::Table>>()).table };
    let body = || {
        let cursor = Box::new(CursorBox {
            base: ffi::sqlite3_vtab_cursor { pVtab: vtab },
            cursor: table.open(),
        });
        // SAFETY: SQLite's out-pointer for the new cursor, which it owns from here.
        unsafe { *out = Box::into_raw(cursor).cast() };
        ffi::SQLITE_OK
    };
    // SAFETY: a table of this module.
    guarded(body, |message| unsafe { set_table_error(vtab, message) })
}

unsafe extern "C" fn x_close<M: TableModule>(cursor: *mut ffi::sqlite3_vtab_cursor) -> c_int {
    // SAFETY: made by x_open; SQLite closes it once.
    drop(unsafe { Box::from_raw(cursor.cast::<CursorBox<<M::Table as VirtualTable>::Cursor>>()) });
    ffi::SQLITE_OK
}

/// The cursor and its table.
///
/// # Safety
/// `cursor` was opened by `x_open::<M>` and is still open.
unsafe fn parts<'a, M: TableModule>(
    cursor: *mut ffi::sqlite3_vtab_cursor,
) -> (
    &'a M::Table,
    &'a mut <M::Table as VirtualTable>::Cursor,
    *mut ffi::sqlite3_vtab,
) {
    // SAFETY: the caller's promise: the cursor and its table are this module's, alive.
    unsafe {
        let vtab = (*cursor).pVtab;
        let table = &(*vtab.cast::<TableBox<M::Table>>()).table;
        let cursor = &mut (*cursor.cast::<CursorBox<<M::Table as VirtualTable>::Cursor>>()).cursor;
        (table, cursor, vtab)
    }
}

unsafe extern "C" fn x_filter<M: TableModule>(
    cursor: *mut ffi::sqlite3_vtab_cursor,
    idx_num: c_int,
    _idx_str: *const c_char,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) -> c_int {
    // SAFETY: SQLite calls this with a cursor `x_open::<M>` opened.
    let (table, cursor, vtab) = unsafe { parts::<M>(cursor) };
    let given = super::create_function::values(argc, argv);
    let mut next = given.iter();
    let args: Vec<Option<SqlValue>> = (0..table.parameter_names().len())
        .map(|i| {
            if idx_num & (1 << i) != 0 {
                next.next().copied()
            } else {
                None
            }
        })
        .collect();
    guarded(
        || status(table.filter(cursor, &args)),
        // SAFETY: the cursor's table, a table of this module.
        |message| unsafe { set_table_error(vtab, message) },
    )
}

unsafe extern "C" fn x_next<M: TableModule>(cursor: *mut ffi::sqlite3_vtab_cursor) -> c_int {
    // SAFETY: SQLite calls this with a cursor `x_open::<M>` opened.
    let (table, cursor, vtab) = unsafe { parts::<M>(cursor) };
    // SAFETY: the cursor's table, a table of this module.
    guarded(
        || status(table.next(cursor)),
        |message| unsafe { set_table_error(vtab, message) },
    )
}

unsafe extern "C" fn x_eof<M: TableModule>(cursor: *mut ffi::sqlite3_vtab_cursor) -> c_int {
    // SAFETY: SQLite calls this with a cursor `x_open::<M>` opened.
    let (table, cursor, _) = unsafe { parts::<M>(cursor) };
    // A panic here ends the scan (xEof has no error status).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c_int::from(table.eof(cursor)))).unwrap_or(1)
}

unsafe extern "C" fn x_column<M: TableModule>(
    cursor: *mut ffi::sqlite3_vtab_cursor,
    ctx: *mut ffi::sqlite3_context,
    column: c_int,
) -> c_int {
    // SAFETY: SQLite calls this with a cursor `x_open::<M>` opened.
    let (table, cursor, vtab) = unsafe { parts::<M>(cursor) };
    let mut out = ResultSink::new(ctx);
    let column = usize::try_from(column).unwrap_or(0);
    guarded(
        || status(table.column(cursor, column, &mut out)),
        // SAFETY: the cursor's table, a table of this module.
        |message| unsafe { set_table_error(vtab, message) },
    )
}

unsafe extern "C" fn x_rowid<M: TableModule>(
    cursor: *mut ffi::sqlite3_vtab_cursor,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite calls this with a cursor `x_open::<M>` opened.
    let (table, cursor, vtab) = unsafe { parts::<M>(cursor) };
    guarded(
        || {
            let rowid = table.rowid(cursor);
            // SAFETY: SQLite's out-pointer for the rowid.
            unsafe { *out = rowid };
            ffi::SQLITE_OK
        },
        // SAFETY: the cursor's table, a table of this module.
        |message| unsafe { set_table_error(vtab, message) },
    )
}

unsafe extern "C" fn destroy_module<M>(p: *mut c_void) {
    // SAFETY: the ModuleBox<M> handed to SQLite at registration; destroyed once.
    drop(unsafe { Box::from_raw(p.cast::<ModuleBox<M>>()) });
}

/// `sqlite3_create_module_v2`: registers (or replaces) module `name`. An eponymous module
/// exists as a table of its name (no `CREATE VIRTUAL TABLE`); the other kind only makes
/// tables through `CREATE VIRTUAL TABLE ... USING name(...)`. On failure SQLite has
/// dropped `imp`.
pub fn create_module<M: TableModule>(
    conn: &Connection,
    name: &[u8],
    eponymous: bool,
    imp: M,
) -> Result<(), StoreError> {
    let name = c_name(name);
    // SAFETY: an all-zero sqlite3_module is a valid one with no methods; the methods
    // this module has are set below.
    let mut module: ffi::sqlite3_module = unsafe { std::mem::zeroed() };
    module.iVersion = 0;
    // The module without xCreate is eponymous-only; an xCreate other than xConnect (which
    // does the same) keeps SQLite from making an eponymous table for the other kind.
    module.xCreate = if eponymous { None } else { Some(x_create::<M>) };
    module.xConnect = Some(x_connect::<M>);
    module.xBestIndex = Some(x_best_index::<M>);
    module.xDisconnect = Some(x_disconnect::<M>);
    module.xDestroy = Some(x_disconnect::<M>);
    module.xOpen = Some(x_open::<M>);
    module.xClose = Some(x_close::<M>);
    module.xFilter = Some(x_filter::<M>);
    module.xNext = Some(x_next::<M>);
    module.xEof = Some(x_eof::<M>);
    module.xColumn = Some(x_column::<M>);
    module.xRowid = Some(x_rowid::<M>);
    let boxed = Box::into_raw(Box::new(ModuleBox { module, imp }));
    // SAFETY: the module struct lives in the box SQLite owns from here (it frees it
    // through destroy_module once no table uses it, also on failure).
    let rc = unsafe {
        ffi::sqlite3_create_module_v2(
            db(conn),
            name.as_ptr(),
            &(*boxed).module,
            boxed.cast(),
            Some(destroy_module::<M>),
        )
    };
    ok_or_last_error(conn, rc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::ValueRef;

    /// `count(n)`: rows 0..n; a table made by CREATE VIRTUAL TABLE counts to its argument.
    struct Counter;

    struct CounterTable {
        names: Vec<String>,
        fixed: Option<i64>,
    }

    #[derive(Default)]
    struct Cursor {
        at: i64,
        end: i64,
    }

    impl TableModule for Counter {
        type Table = CounterTable;
        fn connect(&self, args: &[&[u8]]) -> Result<TableDecl<CounterTable>, Option<String>> {
            let fixed = match args.get(3).copied() {
                Some(b"fail") => return Err(Some("refused".into())),
                Some(arg) => Some(std::str::from_utf8(arg).unwrap().trim().parse().unwrap()),
                None => None,
            };
            Ok(TableDecl {
                sql: b"CREATE TABLE x(\"count\" HIDDEN, n)".to_vec(),
                direct_only: false,
                table: CounterTable {
                    names: vec!["count".into()],
                    fixed,
                },
            })
        }
    }

    impl VirtualTable for CounterTable {
        type Cursor = Cursor;
        fn parameter_names(&self) -> &[String] {
            &self.names
        }
        fn open(&self) -> Cursor {
            Cursor::default()
        }
        fn filter(&self, cursor: &mut Cursor, args: &[Option<SqlValue>]) -> Result<(), ()> {
            cursor.at = 0;
            cursor.end = match &args[0] {
                Some(v) => match v.get() {
                    ValueRef::Integer(n) => n,
                    _ => panic!("count must be an integer"),
                },
                None => self.fixed.unwrap_or(0),
            };
            Ok(())
        }
        fn next(&self, cursor: &mut Cursor) -> Result<(), ()> {
            cursor.at += 1;
            Ok(())
        }
        fn eof(&self, cursor: &Cursor) -> bool {
            cursor.at >= cursor.end
        }
        fn column(&self, cursor: &Cursor, column: usize, out: &mut ResultSink) -> Result<(), ()> {
            out.set(ValueRef::Integer(if column == 0 { cursor.end } else { cursor.at }));
            Ok(())
        }
        fn rowid(&self, cursor: &Cursor) -> i64 {
            cursor.at
        }
    }

    fn numbers(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<i64>> {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect()
    }

    #[test]
    fn an_eponymous_table_takes_its_parameters_by_equality_only() {
        let conn = Connection::open_in_memory().unwrap();
        create_module(&conn, b"count", true, Counter).unwrap();
        assert_eq!(numbers(&conn, "SELECT n FROM count(3)").unwrap(), [0, 1, 2]);
        assert_eq!(numbers(&conn, "SELECT n FROM count WHERE count = 2").unwrap(), [0, 1]);
        assert_eq!(numbers(&conn, "SELECT count FROM count(2)").unwrap(), [2, 2]);
        let err = numbers(&conn, "SELECT n FROM count WHERE count > 2").unwrap_err();
        assert!(
            err.to_string().contains("can only be constrained by the '=' operator"),
            "{err}"
        );
        // A panic in a callback fails the statement; the connection stays usable.
        let err = numbers(&conn, "SELECT n FROM count('x')").unwrap_err();
        assert!(err.to_string().contains("panicked"), "{err}");
        assert_eq!(numbers(&conn, "SELECT n FROM count(1)").unwrap(), [0]);
        let err = conn.execute_batch("CREATE VIRTUAL TABLE c USING count(2)").unwrap_err();
        assert!(err.to_string().contains("no such module"), "{err}");
    }

    #[test]
    fn a_module_makes_tables_only_by_create_virtual_table() {
        let conn = Connection::open_in_memory().unwrap();
        create_module(&conn, b"counter", false, Counter).unwrap();
        assert!(numbers(&conn, "SELECT n FROM counter(2)").is_err());
        conn.execute_batch("CREATE VIRTUAL TABLE four USING counter(4)")
            .unwrap();
        assert_eq!(numbers(&conn, "SELECT n FROM four").unwrap(), [0, 1, 2, 3]);
        let err = conn
            .execute_batch("CREATE VIRTUAL TABLE bad USING counter(fail)")
            .unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
    }
}
