//! SQLite plumbing: the connection, the one transaction guard, the raw C API behind one
//! safe module, error values, and the schema with its open-time migration. No napi.

pub mod connection;
pub mod error;
pub mod raw;
pub mod schema;
pub mod transaction;
pub mod statements;
