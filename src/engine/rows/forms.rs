//! Row forms: how the JS layer builds rows from the values this side hands it. A form
//! is a kind (an object, an array, a lone value, better-sqlite3's expanded object), the
//! number of values each row takes, and its keys; forms are numbered per thread, JS asks
//! for a form's description once (`native.rowForm(id)`) and builds every row of it with
//! one function made for it (lib/database/rows.cjs).

use std::cell::RefCell;
use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::js::protocol::form;

/// What a row of a form is (its number, `protocol::form`, is the first item of the
/// description JS reads).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FormKind {
    Object = form::FORM_OBJECT as isize,
    Array = form::FORM_ARRAY as isize,
    Value = form::FORM_VALUE as isize,
    Expanded = form::FORM_EXPANDED as isize,
}

/// A form as registered: its description, each item after a NUL (SQLite's names hold
/// none): the kind, the values per row, how many trailing keys take parsed JSON, the keys.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FormText(String);

impl FormText {
    pub fn new(kind: FormKind, width: usize, json: usize) -> Self {
        let mut text = String::with_capacity(64);
        for item in [kind as usize, width, json] {
            text.push('\0');
            text.push_str(itoa::Buffer::new().format(item));
        }
        FormText(text)
    }

    pub fn push_key(&mut self, key: &str) {
        self.0.push('\0');
        self.0.push_str(key);
    }

    /// The description's items in order (every item after a NUL; an empty key counts).
    pub fn items(&self) -> impl Iterator<Item = &str> {
        self.0.split('\0').skip(1)
    }
}

/// Forms seen in this thread (a JS realm's addon calls all run on its thread).
#[derive(Default)]
struct Forms {
    ids: HashMap<FormText, u32>,
    texts: Vec<FormText>,
}

/// Numbered forms kept at most: past this (SQL made up per call with ever new column
/// names) a form travels as its description and nothing more is kept.
const MAX_FORMS: usize = 4096;

thread_local! {
    static FORMS: RefCell<Forms> = RefCell::new(Forms::default());
}

/// The number of a form, registered on first sight; None when the registry is full.
pub fn form_id(text: &FormText) -> Option<u32> {
    FORMS.with(|forms| {
        let mut forms = forms.borrow_mut();
        if let Some(&id) = forms.ids.get(text) {
            return Some(id);
        }
        if forms.texts.len() >= MAX_FORMS {
            return None;
        }
        let id = forms.texts.len() as u32;
        forms.texts.push(text.clone());
        forms.ids.insert(text.clone(), id);
        Some(id)
    })
}

/// `native.rowForm(id)`: form `id`'s description, `[kind, width, json, ...keys]` as
/// strings (the JS layer asks once per form).
#[napi]
pub fn row_form(id: u32) -> Result<Vec<String>> {
    FORMS.with(|forms| {
        let forms = forms.borrow();
        let text = forms
            .texts
            .get(id as usize)
            .ok_or_else(|| Error::new(Status::InvalidArg, format!("no row form {id}")))?;
        Ok(text.items().map(str::to_string).collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_keep_empty_keys_and_number_forms_once() {
        let mut text = FormText::new(FormKind::Object, 2, 0);
        text.push_key("");
        text.push_key("a");
        assert_eq!(text.items().collect::<Vec<_>>(), vec!["0", "2", "0", "", "a"]);
        let id = form_id(&text).unwrap();
        assert_eq!(form_id(&text.clone()), Some(id));
        let mut other = FormText::new(FormKind::Array, 2, 0);
        other.push_key("");
        other.push_key("a");
        assert_ne!(form_id(&other), Some(id));
    }
}
