//! One SQLite value as a JS value, as better-sqlite3's `Data::GetValueJS` makes it: every
//! number a double (an INTEGER a BigInt with safe integers on), TEXT a string decoded as
//! V8 decodes UTF-8, a BLOB a Buffer of its own, NULL null. Rows, user-function
//! arguments and pragmas all take their values from here.

use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::ffi::napi::{Napi, Raw};

/// The longest BLOB handed to a JS side that wraps it (see [`value_js_wrapped`]): up to
/// about this size, an ArrayBuffer wrapped by JS costs less than a Buffer made through
/// Node-API; past it the ArrayBuffer's zeroing costs more.
const WRAPPED_BLOB_MAX: usize = 1024;

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

/// [`value_js`] for a caller whose JS side turns every ArrayBuffer it gets into a Buffer
/// (`Buffer.from(arrayBuffer)`: the same Buffer, over memory of its own): a small BLOB
/// crosses as an ArrayBuffer. The flag says whether JS has to wrap this value.
#[inline]
pub fn value_js_wrapped(js: Napi, v: ValueRef<'_>, safe_integers: bool) -> SResult<(Raw, bool)> {
    match v {
        ValueRef::Blob(b) if b.len() <= WRAPPED_BLOB_MAX => Ok((js.arraybuffer_copy(b)?, true)),
        _ => Ok((value_js(js, v, safe_integers)?, false)),
    }
}
