//! The only code that calls Node-API (`napi`) and SQLite's C API (`sqlite`) directly:
//! each call a safe function or method whose status is checked.

// Every unsafe operation stands in an `unsafe` block of its own, with its SAFETY comment,
// even inside an `unsafe fn`.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod napi;
pub mod sqlite;
