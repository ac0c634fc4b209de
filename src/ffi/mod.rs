//! The only code that calls Node-API (`napi`) and SQLite's C API (`sqlite`) directly:
//! each call a safe function or method whose status is checked.

pub mod napi;
pub mod sqlite;
