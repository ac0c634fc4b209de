//! better-sqlite3's engine: connections, statements, binding, rows, transactions,
//! backups, user callbacks and the checkpointer. It knows nothing of the hub.

pub mod backup;
pub mod bind;
pub mod callbacks;
pub mod checkpointer;
pub mod connection;
pub mod database;
pub mod handles;
pub mod js;
pub mod rows;
pub mod statement;
pub mod transaction;
