//! JS-value semantics: the one model of JS values, better-sqlite3's binding rules,
//! JSON in and out, V8 helpers, and throwing errors into JS.

pub mod bind;
pub mod calc;
pub mod create;
pub mod json_in;
pub mod json_out;
pub mod model;
pub mod napi;
pub mod protocol;
pub mod throw;
pub mod v8;
pub mod value;
