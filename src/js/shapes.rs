//! Row shapes: the keys of a row object, in order, numbered per thread. A rows text names
//! its shape by number (`js::rows`); the JS layer asks for a shape's keys once and builds
//! every row of it with one function (lib/protocol.cjs).

use std::cell::RefCell;
use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Shapes seen in this thread (a JS realm's addon calls all run on its thread): their
/// keys (each after a NUL, `split_keys`), by number and numbers by keys.
#[derive(Default)]
struct Shapes {
    ids: HashMap<String, u32>,
    keys: Vec<String>,
}

/// Numbered shapes kept at most: past this (SQL made up per call with ever new column
/// names) a text carries its keys itself and nothing more is kept.
const MAX_SHAPES: usize = 4096;

thread_local! {
    static SHAPES: RefCell<Shapes> = RefCell::new(Shapes::default());
}

/// The number of the shape with these keys (each after a NUL), registered on first sight;
/// None when the registry is full.
pub fn shape_id(joined: &str) -> Option<u32> {
    SHAPES.with(|shapes| {
        let mut shapes = shapes.borrow_mut();
        if let Some(&id) = shapes.ids.get(joined) {
            return Some(id);
        }
        if shapes.keys.len() >= MAX_SHAPES {
            return None;
        }
        let id = shapes.keys.len() as u32;
        shapes.keys.push(joined.to_string());
        shapes.ids.insert(joined.to_string(), id);
        Some(id)
    })
}

/// The keys of a shape text, where each key follows a NUL (no keys for an empty text;
/// an empty key is a NUL followed by the next NUL or the end).
pub fn split_keys(joined: &str) -> impl Iterator<Item = &str> {
    joined.split('\0').skip(1)
}

#[cfg(test)]
mod tests {
    use super::split_keys;

    #[test]
    fn empty_keys_count() {
        fn keys(joined: &str) -> Vec<&str> {
            split_keys(joined).collect()
        }
        assert_eq!(keys(""), Vec::<&str>::new());
        assert_eq!(keys("\0"), vec![""]);
        assert_eq!(keys("\0\0ugc"), vec!["", "ugc"]);
        assert_eq!(keys("\0a\0"), vec!["a", ""]);
    }
}

/// The keys of row shape `id`, in order (the JS layer asks once per shape).
#[napi]
pub fn row_keys(id: u32) -> Result<Vec<String>> {
    SHAPES.with(|shapes| {
        let shapes = shapes.borrow();
        let joined = shapes
            .keys
            .get(id as usize)
            .ok_or_else(|| Error::new(Status::InvalidArg, format!("no row shape {id}")))?;
        Ok(split_keys(joined).map(str::to_string).collect())
    })
}
