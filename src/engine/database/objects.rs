//! better-sqlite3's own data properties on the facade's objects: read-only, not
//! configurable, enumerable, on objects that stay extensible (its `SetFrozen`). Defined
//! natively, in one Node-API call per object.

use napi::Result;

use crate::ffi::napi::{Napi, Raw};

fn defined(js: Napi, out: crate::error::SResult<()>) -> Result<Raw> {
    out.map_err(|_| napi::Error::from_reason("could not define a statement's properties"))?;
    js.undefined()
        .map_err(|_| napi::Error::from_reason("could not define a statement's properties"))
}

/// `facadeStatementTraits(stmt, reader, readonly, source, database)`: a Statement's own
/// properties after `busy`, in better-sqlite3's order.
pub fn statement_traits(js: Napi, args: &[Raw]) -> Result<Raw> {
    let &[obj, reader, readonly, source, database] = args else {
        return Err(napi::Error::from_reason("facadeStatementTraits takes 5 arguments"));
    };
    let props = [
        (c"reader", reader),
        (c"readonly", readonly),
        (c"source", source),
        (c"database", database),
    ];
    defined(js, js.define_frozen(obj, props))
}

/// `facadeIteratorTraits(iterator, statement)`: a StatementIterator's `statement`.
pub fn iterator_traits(js: Napi, args: &[Raw]) -> Result<Raw> {
    let &[obj, statement] = args else {
        return Err(napi::Error::from_reason("facadeIteratorTraits takes 2 arguments"));
    };
    defined(js, js.define_frozen(obj, [(c"statement", statement)]))
}
