//! A FLAT `get()` row of a few columns without JSON: each column's kind and number go
//! into the result slots (`js::slots`), and every TEXT value of the row into one JS
//! string, which the glue's maker for the row's shape slices (lib/protocol.cjs). One
//! Node-API call per row however many columns it has, and nothing for JS to parse.
//!
//! Per column `i` the slots hold a kind at `ROW_COLUMNS + 2i` and at `ROW_COLUMNS + 2i + 1`
//! the number (NUMBER) or the end of the value in the string, in UTF-16 units (TEXT:
//! it starts where the previous TEXT ended). A row with a BLOB or with TEXT that is not
//! valid UTF-8 (concatenated, V8 could decode it across the boundary) is not slotted.

use std::cell::RefCell;

use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::napi::{Napi, Raw};
use crate::js::slots;
use crate::sqlite::raw::RawStmt;

/// Kinds in the slots (lib/protocol.cjs `slottedMaker` reads them).
const NUMBER: f64 = 0.0;
const TEXT: f64 = 1.0;
const NULL: f64 = 2.0;

/// The most text capacity kept between rows.
const KEPT_CAPACITY: usize = 64 * 1024;

thread_local! {
    // The row's texts, concatenated; kept between calls to keep its capacity.
    static TEXTS: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The length of valid UTF-8 `text` in UTF-16 units (a JS string's length).
fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char::len_utf16).sum()
}

/// Writes the current row of `stmt` into the slots and returns the string of its texts,
/// or None when the row cannot be slotted (too many columns, a BLOB, bad UTF-8); the slots
/// are then left as they were. Kept out of line: inlined, it made the one-column `get`
/// beside it longer.
#[inline(never)]
pub(super) fn slotted_row(js: Napi, stmt: &RawStmt) -> SResult<Option<Raw>> {
    let n = stmt.column_count();
    if n > slots::ROW_COLUMNS_MAX {
        return Ok(None);
    }
    let mut values = [0f64; 2 * slots::ROW_COLUMNS_MAX];
    TEXTS.with(|texts| {
        let mut texts = texts.borrow_mut();
        texts.clear();
        let mut end = 0usize;
        for i in 0..n {
            let (kind, number) = match stmt.column(i) {
                ValueRef::Integer(v) => (NUMBER, v as f64),
                ValueRef::Real(v) => (NUMBER, v),
                ValueRef::Null => (NULL, 0.0),
                ValueRef::Text(bytes) => {
                    let Ok(text) = std::str::from_utf8(bytes) else {
                        return Ok(None);
                    };
                    texts.extend_from_slice(bytes);
                    end += utf16_len(text);
                    (TEXT, end as f64)
                }
                ValueRef::Blob(_) => return Ok(None),
            };
            values[2 * i] = kind;
            values[2 * i + 1] = number;
        }
        slots::set_all(js, slots::ROW_COLUMNS, &values[..2 * n])?;
        let string = js.string_utf8(&texts);
        // A row of long texts does not keep its buffer for the rest of the thread's life.
        if texts.capacity() > KEPT_CAPACITY {
            *texts = Vec::new();
        }
        string.map(Some)
    })
}

#[cfg(test)]
mod tests {
    use super::utf16_len;

    #[test]
    fn utf16_lengths() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("agent-001"), 9);
        assert_eq!(utf16_len("é日"), 2);
        assert_eq!(utf16_len("a😀b"), 4);
    }
}
