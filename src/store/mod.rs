//! The hub's store methods, one file per area, as `#[napi] impl NativeDb` blocks.

pub mod queries;
pub mod scale;
pub mod uuid7;

mod agents;
mod assign;
mod human;
mod messages;
mod reflexion;
mod role_key;
mod roles;
mod stats;
