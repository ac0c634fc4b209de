//! The only code that calls Node-API (`napi`) and SQLite's C API (`sqlite`) directly:
//! each call a safe function or method whose status is checked.

// Every unsafe operation stands in an `unsafe` block of its own, with its SAFETY comment,
// even inside an `unsafe fn`.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod napi;
pub mod sqlite;

/// Where a C API reads a string's, TEXT's or BLOB's bytes from: a real address even for
/// no bytes. An empty slice's own pointer is dangling, and SQLite takes NULL for SQL NULL
/// even with a length of 0.
fn bytes_ptr(bytes: &[u8]) -> *const std::ffi::c_void {
    if bytes.is_empty() {
        c"".as_ptr().cast()
    } else {
        bytes.as_ptr().cast()
    }
}
