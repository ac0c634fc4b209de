//! The JS boundary's values: a caller's value as it arrives (`value`), errors thrown
//! into JS (`throw`), values kept across calls (`persistent`), JSON text (`json_out`,
//! `json_in`), the wire's codes (`protocol`) and the numbers left beside a call's result
//! (`result_slots`).

pub mod json_in;
pub mod json_out;
pub mod persistent;
pub mod protocol;
pub mod result_slots;
pub mod sql_value;
pub mod throw;
pub mod value;
