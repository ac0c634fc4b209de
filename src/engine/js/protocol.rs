//! The wire between the native methods and the JS glue, defined here once (its JS twin
//! is lib/protocol.cjs). Keep both in step.
//!
//! - Rows are JS values built through `js::rows` (lib/rows.cjs builds them in JS); the
//!   few results that are not rows travel as JSON text parsed once in JS.
//! - `db.prepare` returns one number, see [`pack_statement`].
//! - Row modes and transaction kinds are small numbers, see [`RowMode`] and [`TxKind`];
//!   a mode plus [`SAFE_INTEGERS`] reads INTEGER values as BigInt.

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

/// The bits of a statement call's mode that hold the row mode.
pub const MODE_BITS: u32 = 3;
/// Added to a row mode: INTEGER values as BigInt (`stmt.safeIntegers()`).
pub const SAFE_INTEGERS: u32 = 4;
/// Added to a statement call's mode: its parameters are one value per statement
/// parameter, in order (read by the JS layer from a named-parameter object).
pub const IN_ORDER: u32 = 8;

/// What a statement call is about to do, for the checks better-sqlite3 makes before it
/// reads a named-parameter object (`facadeCheck`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `get()`, `all()`.
    Read,
    /// `run()`: refused while an iterator is open, unless in unsafe mode.
    Write,
    /// `iterate()`: adds an iterator.
    Iterate,
}

impl CallKind {
    pub fn from_wire(kind: u32) -> Self {
        match kind {
            1 => CallKind::Write,
            2 => CallKind::Iterate,
            _ => CallKind::Read,
        }
    }
}

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
