//! Where a statement's columns go in its rows: which columns become values (and how),
//! which are stored JSON that JS parses, and the form the rows are built by. A layout is
//! made after the statement's first step (its columns are current then) and kept between
//! calls while SQLite has not prepared the statement again.

use std::borrow::Cow;

use rusqlite::types::ValueRef;

use crate::engine::js::protocol::RowMode;
use crate::ffi::sqlite::{ColumnMeta, RawStmt};

use super::forms::{form_id, FormKind, FormText};

/// How a statement's rows are shaped beyond their columns: stored JSON columns parsed
/// and moved to the end under their own keys (a JSON column missing from the statement
/// gets its fallback), and a column whose falsy value reads as a default text.
pub struct RowShape {
    /// (stored column, output key, fallback JSON), appended in this order after the
    /// other columns.
    pub json: &'static [(&'static str, &'static str, &'static str)],
    /// (column, default): the column reads as `default` where its value is falsy in JS.
    pub falsy_default: Option<(&'static str, &'static str)>,
}

/// Every column as it is.
pub const PLAIN: RowShape = RowShape {
    json: &[],
    falsy_default: None,
};

/// What one of a statement's columns is in its rows.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Column {
    Value,
    /// A value, or the text when the value is falsy.
    FalsyDefault(&'static str),
}

/// The form of the rows: registered (a number) or, once the registry is full, its
/// description, which then travels with the rows.
#[derive(Clone, Debug)]
pub enum Form {
    Id(u32),
    Text(FormText),
}

pub struct RowLayout {
    reprepares: i32,
    shape_of: *const RowShape,
    mode: RowMode,
    /// The columns that give a row's values, in order, and what each is.
    pub values: Vec<(usize, Column)>,
    /// The JSON of a row in key order: the column holding it (if the statement has it)
    /// and the fallback text.
    pub json: Vec<(Option<usize>, &'static str)>,
    pub form: Form,
}

impl RowLayout {
    /// Lays out a statement that has been stepped (its columns are current then).
    pub fn new(stmt: &RawStmt, shape: &RowShape, mode: RowMode) -> Self {
        let count = stmt.column_count();
        let (values, json, form) = match mode {
            RowMode::Pluck => {
                let values = if count > 0 {
                    vec![(0, Column::Value)]
                } else {
                    Vec::new()
                };
                (values, Vec::new(), FormText::new(FormKind::Value, 1, 0))
            }
            RowMode::Raw => {
                let values = (0..count).map(|i| (i, Column::Value)).collect();
                (values, Vec::new(), FormText::new(FormKind::Array, count, 0))
            }
            RowMode::Expand => {
                let mut form = FormText::new(FormKind::Expanded, count, 0);
                for i in 0..count {
                    form.push_key(&stmt.column_meta(i, ColumnMeta::Table).unwrap_or(Cow::Borrowed("$")));
                    form.push_key(&stmt.column_meta(i, ColumnMeta::Name).unwrap_or_default());
                }
                let values = (0..count).map(|i| (i, Column::Value)).collect();
                (values, Vec::new(), form)
            }
            RowMode::Flat => return Self::object(stmt, shape),
        };
        RowLayout {
            reprepares: stmt.reprepares(),
            shape_of: shape,
            mode,
            values,
            json,
            form: registered(form),
        }
    }

    /// A FLAT row: the columns by name, the shape's JSON columns moved to the end.
    fn object(stmt: &RawStmt, shape: &RowShape) -> Self {
        let count = stmt.column_count();
        let mut values = Vec::with_capacity(count);
        let mut json: Vec<(Option<usize>, &'static str)> =
            shape.json.iter().map(|&(_, _, fallback)| (None, fallback)).collect();
        let mut keys: Vec<Cow<'_, str>> = Vec::with_capacity(count + json.len());
        for i in 0..count {
            let name = stmt.column_name_bytes(i);
            if let Some(slot) = shape.json.iter().position(|(column, _, _)| column.as_bytes() == name) {
                json[slot].0 = Some(i);
                continue;
            }
            let column = match shape.falsy_default {
                Some((column, default)) if column.as_bytes() == name => Column::FalsyDefault(default),
                _ => Column::Value,
            };
            values.push((i, column));
            keys.push(String::from_utf8_lossy(name));
        }
        let mut form = FormText::new(FormKind::Object, values.len(), json.len());
        for key in keys
            .iter()
            .map(|k| k.as_ref())
            .chain(shape.json.iter().map(|&(_, key, _)| key))
        {
            form.push_key(key);
        }
        RowLayout {
            reprepares: stmt.reprepares(),
            shape_of: shape,
            mode: RowMode::Flat,
            values,
            json,
            form: registered(form),
        }
    }

    /// The kept layout `memo` if it is still `stmt`'s in `shape` and `mode`, else a new
    /// one kept there.
    pub fn current<'m>(
        memo: &'m mut Option<RowLayout>,
        stmt: &RawStmt,
        shape: &RowShape,
        mode: RowMode,
    ) -> &'m RowLayout {
        let valid = memo
            .as_ref()
            .is_some_and(|l| l.reprepares == stmt.reprepares() && std::ptr::eq(l.shape_of, shape) && l.mode == mode);
        if !valid {
            *memo = None;
        }
        memo.get_or_insert_with(|| RowLayout::new(stmt, shape, mode))
    }

    /// The form a row of one value is built by in JS, when it can cross as that value
    /// alone (a registered form, no JSON): such a row needs no call into JS here.
    pub fn single_value(&self) -> Option<u32> {
        match self.form {
            Form::Id(id) if self.values.len() == 1 && self.json.is_empty() => Some(id),
            _ => None,
        }
    }
}

fn registered(text: FormText) -> Form {
    match form_id(&text) {
        Some(id) => Form::Id(id),
        None => Form::Text(text),
    }
}

/// JS truthiness of a column value as better-sqlite3 would return it.
pub fn value_truthy(v: ValueRef<'_>) -> bool {
    match v {
        ValueRef::Null => false,
        ValueRef::Integer(i) => i != 0,
        ValueRef::Real(f) => !(f == 0.0 || f.is_nan()),
        ValueRef::Text(t) => !t.is_empty(),
        ValueRef::Blob(_) => true,
    }
}
