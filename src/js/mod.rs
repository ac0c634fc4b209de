//! The Node-API boundary: JS values as they arrive (`value`), better-sqlite3's binding
//! rules (`bind`), rows out (`rows`: every read's one path), JSON text for the few
//! results that are not rows (`json_out`; checked stored JSON with `json_in`), JS values
//! returned as they are (`create`), values kept across calls
//! (`persistent`), small numbers left beside a call's result (`slots`), a connection's
//! better-sqlite3 switches (`switches`), errors thrown into JS (`throw`), the wire
//! protocol with the JS layer (`protocol`), what user callbacks share (`callbacks`), the
//! queue of aggregate calls delivered to JS in batches (`batch`), and
//! every raw Node-API call (`napi`).

pub mod batch;
pub mod bind;
pub mod callbacks;
pub mod create;
pub mod json_in;
pub mod json_out;
pub mod napi;
pub mod persistent;
pub mod protocol;
pub mod rows;
pub mod slots;
pub mod switches;
pub mod throw;
pub mod value;
