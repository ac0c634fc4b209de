//! User functions, aggregates and virtual tables: what SQLite runs inside a statement
//! step, on the JS thread.

pub mod call;
pub mod frames;
pub mod functions;
pub mod queue;
pub mod scope;
pub mod tables;
