//! One SQLite value as a JS value, as better-sqlite3's `Data::GetValueJS` makes it: every
//! number a double (an INTEGER a BigInt with safe integers on), TEXT a string decoded as
//! V8 decodes UTF-8, a BLOB a Buffer of its own, NULL null. Rows, user-function
//! arguments and pragmas all take their values from here.

use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::napi::{Napi, Raw};

pub fn value_js(js: Napi, v: ValueRef<'_>, safe_integers: bool) -> SResult<Raw> {
    match v {
        ValueRef::Null => js.null(),
        ValueRef::Integer(n) if safe_integers => js.bigint(n),
        ValueRef::Integer(n) => js.number(n as f64),
        ValueRef::Real(f) => js.number(f),
        ValueRef::Text(t) => js.text(t),
        ValueRef::Blob(b) => js.buffer_copy(b),
    }
}
