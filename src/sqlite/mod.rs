//! SQLite plumbing: the connection, the one transaction guard, the raw C API behind one
//! safe module, the schema with its open-time migration, online backups and the files
//! they write, the store connection's background checkpoints (`checkpointer`), the
//! benchmarks' floor recorder (`floor`), and what a step lends the callbacks it runs
//! (`step_frames`). No napi.

pub mod backup;
pub mod checkpointer;
pub mod connection;
pub mod dest_file;
pub mod floor;
pub mod raw;
pub mod schema;
pub mod statements;
pub mod step_frames;
pub mod transaction;
