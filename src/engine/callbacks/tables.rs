//! `db.table()`: virtual tables whose rows a JS generator yields, better-sqlite3's
//! `CustomTable`. The JS layer (lib/database/functions.cjs) checks the definition and
//! hands over a factory that returns `[sql, open, parameters, safeIntegers, directOnly]`
//! for each table; `open(...args)` starts a scan as `[row, pull]`: `pull()` refills the
//! one `row` array (parameters first, then the columns) and says whether there was a row.

use rusqlite::Connection;
use smallvec::SmallVec;

use crate::engine::callbacks::call::{report, set_result, Registered};
use crate::engine::callbacks::queue as batch;
use crate::engine::callbacks::scope::callback_scope;
use crate::engine::js::sql_value::value_js;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{JsRef, Napi, Raw};
use crate::ffi::sqlite::create_function::{ResultSink, SqlValue};
use crate::ffi::sqlite::create_module::{create_module, TableDecl, TableModule, VirtualTable};

struct JsModule {
    js: Napi,
    db: u32,
    _registered: Registered,
    factory: JsRef,
    name: String,
}

impl JsModule {
    fn make(&self, args: &[&[u8]]) -> SResult<TableDecl<JsTable>> {
        let js = self.js;
        batch::deliver(js)?;
        let _scope = js.scope()?;
        let mut argv: SmallVec<[Raw; 8]> = SmallVec::new();
        for arg in args {
            argv.push(js.string_utf8(arg)?);
        }
        let def = js.call(self.factory.get(js)?, js.undefined()?, &argv)?;
        let sql = JsVal::wrap(js, js.element(def, 0)?)?.sqlite_text()?.to_vec();
        let open = js.keep(js.element(def, 1)?)?;
        let names = JsVal::wrap(js, js.element(def, 2)?)?;
        let mut parameter_names = Vec::new();
        for i in 0..names.array_len()? {
            let name = names.element(i)?.sqlite_text()?;
            parameter_names.push(String::from_utf8_lossy(&name).into_owned());
        }
        let safe_ints = js.bool_value(js.element(def, 3)?)?;
        let direct_only = js.bool_value(js.element(def, 4)?)?;
        Ok(TableDecl {
            sql,
            direct_only,
            table: JsTable {
                js,
                db: self.db,
                open,
                parameter_names,
                safe_ints,
                module: self.name.clone(),
            },
        })
    }
}

impl TableModule for JsModule {
    type Table = JsTable;

    fn connect(&self, args: &[&[u8]]) -> std::result::Result<TableDecl<JsTable>, Option<String>> {
        self.make(args).map_err(|error| {
            report(self.js, error);
            None
        })
    }
}

struct JsTable {
    js: Napi,
    /// The connection's handle (busy while a scan runs). Not while a table is made: the
    /// factory runs inside `prepare`, where better-sqlite3 does not count it busy.
    db: u32,
    /// The JS layer's `open(...args)`: starts a scan, giving `[row, pull]`.
    open: JsRef,
    parameter_names: Vec<String>,
    safe_ints: bool,
    module: String,
}

#[derive(Default)]
struct Cursor {
    /// The scan's row array (refilled for each row) and the function that refills it.
    row: Option<JsRef>,
    pull: Option<JsRef>,
    done: bool,
    rowid: i64,
}

impl JsTable {
    fn start(&self, cursor: &mut Cursor, args: &[Option<SqlValue>]) -> SResult<()> {
        let js = self.js;
        batch::deliver(js)?;
        let (_scope, _running) = callback_scope(js, self.db)?;
        let mut argv: SmallVec<[Raw; 8]> = SmallVec::new();
        for arg in args {
            let value = match arg {
                Some(value) => value_js(js, value.get(), self.safe_ints)?,
                None => js.undefined()?,
            };
            // A NULL argument matches no row: the generator is not run.
            if arg.is_some_and(|v| v.get() == rusqlite::types::ValueRef::Null) {
                cursor.done = true;
                return Ok(());
            }
            argv.push(value);
        }
        let scan = js.call(self.open.get(js)?, js.undefined()?, &argv)?;
        cursor.row = Some(js.keep(js.element(scan, 0)?)?);
        cursor.pull = Some(js.keep(js.element(scan, 1)?)?);
        cursor.rowid = 0;
        self.advance(cursor)
    }

    fn advance(&self, cursor: &mut Cursor) -> SResult<()> {
        let js = self.js;
        batch::deliver(js)?;
        let (_scope, _running) = callback_scope(js, self.db)?;
        let Some(pull) = &cursor.pull else {
            cursor.done = true;
            return Ok(());
        };
        let more = js.call(pull.get(js)?, js.undefined()?, &[])?;
        cursor.done = !js.bool_value(more)?;
        cursor.rowid += 1;
        Ok(())
    }

    fn value(&self, cursor: &Cursor, column: usize, out: &mut ResultSink) -> SResult<()> {
        let js = self.js;
        batch::deliver(js)?;
        let (_scope, _running) = callback_scope(js, self.db)?;
        let row = cursor
            .row
            .as_ref()
            .ok_or_else(|| StoreError::error("a virtual table column was read before its row"))?;
        let index = u32::try_from(column).map_err(|_| StoreError::range_error("column out of range"))?;
        let value = js.element(row.get(js)?, index)?;
        set_result(js, value, out, || {
            format!("Virtual table module \"{}\" yielded", self.module)
        })
    }

    fn reported(&self, result: SResult<()>) -> std::result::Result<(), ()> {
        result.map_err(|error| report(self.js, error))
    }
}

impl VirtualTable for JsTable {
    type Cursor = Cursor;

    fn parameter_names(&self) -> &[String] {
        &self.parameter_names
    }

    fn open(&self) -> Cursor {
        Cursor::default()
    }

    fn filter(&self, cursor: &mut Cursor, args: &[Option<SqlValue>]) -> std::result::Result<(), ()> {
        let result = self.start(cursor, args);
        self.reported(result)
    }

    fn next(&self, cursor: &mut Cursor) -> std::result::Result<(), ()> {
        let result = self.advance(cursor);
        self.reported(result)
    }

    fn eof(&self, cursor: &Cursor) -> bool {
        cursor.done
    }

    fn column(&self, cursor: &Cursor, column: usize, out: &mut ResultSink) -> std::result::Result<(), ()> {
        let result = self.value(cursor, column, out);
        self.reported(result)
    }

    fn rowid(&self, cursor: &Cursor) -> i64 {
        cursor.rowid
    }
}

/// Registers `db.table(name, factory)` on `conn` (the connection of handle `db`):
/// `eponymous` for a definition object (the table exists under the module's name), else
/// tables come from `CREATE VIRTUAL TABLE`.
pub fn register_table(
    js: Napi,
    conn: &Connection,
    db: u32,
    factory: JsVal,
    name: JsVal,
    eponymous: bool,
) -> SResult<()> {
    let bytes = name.sqlite_text()?.to_vec();
    let imp = JsModule {
        js,
        db,
        _registered: Registered::new(js),
        factory: js.keep(factory.raw())?,
        name: String::from_utf8_lossy(&bytes).into_owned(),
    };
    create_module(conn, &bytes, eponymous, imp)
}
