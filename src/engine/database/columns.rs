//! `stmt.columns()`: each result column's name, origin column, table, database and
//! declared type, as better-sqlite3's `Statement::JS_columns` reports them.

use crate::engine::js::json_out::{JsonArray, JsonOut};
use crate::ffi::sqlite::{ColumnMeta, RawStmt};

/// `stmt.columns()` as JSON: name, column, table, database and declared type.
pub(super) fn columns_json(stmt: &RawStmt) -> String {
    let mut out = JsonOut::new();
    let mut columns = JsonArray::open(&mut out);
    for i in 0..stmt.column_count() {
        columns.item(&mut out);
        let fields = [
            ("name", ColumnMeta::Name),
            ("column", ColumnMeta::Origin),
            ("table", ColumnMeta::Table),
            ("database", ColumnMeta::Database),
            ("type", ColumnMeta::DeclType),
        ];
        out.buf.push('{');
        let mut first = true;
        for (key, which) in fields {
            out.key(&mut first, key);
            match stmt.column_meta(i, which) {
                Some(text) => out.str(&text),
                None => out.null(),
            }
        }
        out.buf.push('}');
    }
    columns.close(&mut out);
    out.finish()
}
