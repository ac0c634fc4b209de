//! The wire between the native methods and the JS glue, defined here once (its JS twin
//! is lib/protocol.cjs). Keep both in step.
//!
//! - Rows and results travel as JSON text written here and parsed once in JS. A text
//!   starting with [`WITH_MARKERS`] holds marker objects `{"\u0000tfx": ...}` for values
//!   JSON cannot carry: NaN (`"NaN"`) and BLOBs (`"blob"`, base64 in `data`).
//! - An empty string means `undefined` (an iterator's end, a pragma without a row).
//! - `db.prepare` returns one number, see [`pack_statement`].
//! - Row modes and transaction kinds are small numbers, see [`RowMode`] and [`TxKind`];
//!   a mode plus [`SAFE_INTEGERS`] reads INTEGER values as BigInt.

/// Prefix of a JSON text that holds marker objects.
pub const WITH_MARKERS: char = '\u{1}';
/// Key of a marker object.
pub const MARKER_KEY: &str = "\u{0}tfx";

/// better-sqlite3's row modes (`Data::FLAT/PLUCK/EXPAND/RAW`) as the glue numbers them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RowMode {
    Flat,
    Pluck,
    Expand,
    Raw,
}

impl RowMode {
    pub fn from_wire(mode: u32) -> Self {
        match mode {
            1 => RowMode::Pluck,
            2 => RowMode::Expand,
            3 => RowMode::Raw,
            _ => RowMode::Flat,
        }
    }
}

/// Added to a row mode: INTEGER values as BigInt (`stmt.safeIntegers()`).
pub const SAFE_INTEGERS: u32 = 4;

/// `db.transaction(fn)` variants as the glue numbers them: 0 plain BEGIN, 1 deferred,
/// 2 immediate, 3 exclusive.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    Deferred,
    Immediate,
    Exclusive,
}

impl TxKind {
    pub fn from_wire(kind: u32) -> Self {
        match kind {
            2 => TxKind::Immediate,
            3 => TxKind::Exclusive,
            _ => TxKind::Deferred,
        }
    }
}

/// `id * 4 + returns_data * 2 + readonly`: one number instead of an object.
pub fn pack_statement(id: u32, returns_data: bool, readonly: bool) -> f64 {
    f64::from(id) * 4.0 + if returns_data { 2.0 } else { 0.0 } + if readonly { 1.0 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_numbers_pack() {
        assert_eq!(pack_statement(5, true, false), 22.0);
    }
}
