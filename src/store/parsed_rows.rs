//! The shapes of the store's rows: the original's `parse*Row` helpers, applied by
//! `engine::rows` when it writes a row (each stored `*_json` column dropped from its place
//! and its parsed value appended under the short name).

pub use crate::engine::rows::{RowShape, PLAIN};

pub const AGENT: RowShape = RowShape {
    json: &[
        ("capabilities_json", "capabilities", "[]"),
        ("topics_json", "topics", "[]"),
        ("metadata_json", "metadata", "{}"),
    ],
    falsy_default: None,
};
pub const MESSAGE: RowShape = RowShape {
    json: &[("payload_json", "payload", "{}")],
    falsy_default: None,
};
pub const HUMAN_REQUEST: RowShape = RowShape {
    json: &[("schema_json", "schema", "{}"), ("response_json", "response", "null")],
    falsy_default: None,
};
pub const ASSIGN: RowShape = RowShape {
    json: &[
        ("payload_json", "payload", "{}"),
        ("result_json", "result", "null"),
        ("error_json", "error", "null"),
    ],
    falsy_default: None,
};
pub const REFLEXION: RowShape = RowShape {
    json: &[
        ("context_json", "context", "{}"),
        ("adaptive_state_json", "adaptive_state", "{}"),
    ],
    falsy_default: Some(("type", "reflexion")),
};
pub const CANDIDATE: RowShape = RowShape {
    json: &[("transport_locators_json", "transport_locators", "[]")],
    falsy_default: None,
};
