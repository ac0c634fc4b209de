//! The names of a statement's named parameters as JS strings, made once per statement
//! (better-sqlite3 keeps its `BindMap` the same way): binding an object looks each one up
//! on it, and making the key strings again on every call cost more than the rest of a
//! `run()`.

use crate::error::SResult;
use crate::ffi::napi::{JsRef, Napi, Raw};

use super::ParamInfo;

pub struct NamedKeys {
    /// Each named parameter's index and name without its prefix, in index order.
    params: Vec<(usize, String)>,
    /// The names as JS strings, in one JS array (Node-API keeps no reference to a string
    /// itself before its version 10).
    keys: JsRef,
}

impl NamedKeys {
    pub fn new(js: Napi, stmt: &(impl ParamInfo + ?Sized)) -> SResult<Self> {
        let params = named_parameters(stmt);
        let array = js.array(params.len())?;
        for (k, (_, name)) in params.iter().enumerate() {
            js.set_element(array, k as u32, js.text(name.as_bytes())?)?;
        }
        Ok(NamedKeys {
            params,
            keys: js.keep(array)?,
        })
    }

    /// Each named parameter: its index, its name, and its name as a JS string.
    pub fn each(&self, js: Napi, mut f: impl FnMut(usize, &str, Raw) -> SResult<()>) -> SResult<()> {
        let array = self.keys.get(js)?;
        for (k, (index, name)) in self.params.iter().enumerate() {
            f(*index, name, js.element(array, k as u32)?)?;
        }
        Ok(())
    }
}

/// Each named parameter's index and name without its prefix (`@a` → `a`, `?1` → `1`).
pub fn named_parameters(stmt: &(impl ParamInfo + ?Sized)) -> Vec<(usize, String)> {
    (1..=stmt.parameter_count())
        .filter_map(|i| {
            stmt.parameter_name(i)
                .map(|n| (i, n.get(1..).unwrap_or_default().to_string()))
        })
        .collect()
}
