//! The wire between the native functions and the JS layer, defined here once: every
//! number both sides agree on, by the name JS reads it under. `native.protocol()` hands
//! them all out; `tools/protocol.mjs` writes them into `lib/protocol.cjs`, which the JS
//! layer reads them from; `lib/native.cjs` refuses a binary whose numbers differ, and a
//! test fails when the two do.
//!
//! - Rows are JS values built by `lib/database/rows.cjs` from the values `rows` hands it;
//!   the few results that are not rows travel as JSON text parsed once in JS.
//! - A statement call's mode is a row mode ([`mode`]) plus flags; `db.prepare` returns
//!   one number ([`pack_statement`]).
//! - A call leaves small results in the result slots ([`slot`], `result_slots`); user
//!   callbacks' arguments, results and queued calls travel there too.

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::js::throw::Throw;
use crate::ffi::napi::returned::Returned;
use crate::ffi::napi::{Napi, Raw};

/// Defines numbered constants and the list of their names and values.
macro_rules! wire {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        // Some are read by JS alone (the table below hands them over).
        $($(#[$doc])* #[allow(dead_code)] pub const $name: $ty = $value;)*
        /// Every constant of this part of the wire, by name.
        pub(super) const ALL: &[(&std::ffi::CStr, f64)] = &[$(
            (match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                Ok(name) => name,
                Err(_) => panic!("a wire name"),
            }, $value as f64)
        ),*];
    };
}

/// The result slots: numbers a call leaves beside its return value, in one Float64Array
/// per JS environment (`result_slots`), read by JS right after the call.
pub mod slot {
    wire! {
        /// `stmt.run()`'s `lastInsertRowid`.
        LAST_ROWID: usize = 0;
        /// The same as the 64 bits of an i64 (JS reads it through a BigInt64Array view of
        /// the same memory with safe integers on).
        LAST_ROWID_BITS: usize = 1;
        /// The form (`rows::forms`) JS wraps the lone value a `get()` or an iterator's
        /// `next()` returned in (>= 0), -1 when the value is the row itself, or at most
        /// [`super::form::LANE_ROW`] when the row's values are all in the row lane.
        ROW_FORM: usize = 2;
        /// The handle + 1 of the connection whose `verbose` logger is running (0: none),
        /// so that calls the JS layer answers alone refuse while the connection is busy.
        BUSY: usize = 3;
        /// How many user callbacks are registered on this thread: JS asks whether a
        /// connection is busy only when this is not 0.
        CALLBACKS: usize = 4;
        /// The call frame of user callbacks starts here: 1 when the slots are memory
        /// shared with JS, set once when they are made (where they are V8's own, the
        /// frame is only a fallback's scratch space).
        CALL_SHARED: usize = 5;
        /// What the callback's result is ([`super::group`] RESULT_*): the number in
        /// CALL_RESULT, a string (its length in UTF-16 units in CALL_RESULT), or another
        /// JS value (each of the latter two is the value the callback returned). Written
        /// by JS before it returns.
        CALL_RESULT_TYPE: usize = 6;
        CALL_RESULT: usize = 7;
        /// An aggregate's group (its running value's index in the JS layer's array).
        CALL_STATE: usize = 8;
        /// An aggregate call's flags ([`super::group`]).
        CALL_FLAGS: usize = 9;
        /// The callback's first arguments, as numbers (32-bit integers, doubles or BigInt
        /// bits), from here on.
        CALL_ARGS: usize = 10;
        /// How many arguments the frame holds; later ones travel as JS values.
        CALL_ARGS_MAX: usize = 16;
        /// How many calls are queued for delivery (`callbacks::queue`), as an i32.
        QUEUE_LEN: usize = CALL_ARGS + CALL_ARGS_MAX;
        /// The queued calls from here on: per call two slots of i32 pairs (the runner's
        /// index and the group's number; flags, kind and argument count, and the
        /// arguments' types), then its arguments as numbers, one slot each.
        QUEUE: usize = QUEUE_LEN + 1;
        /// The queue's room in slots.
        QUEUE_SLOTS: usize = 2048;
        /// The row lane, from here on: the numbers of a chunk of rows or of a maker's
        /// row, as doubles or, for INTEGER values read as BigInt, as i64 bits (the value
        /// at place p among the filler's values or the maker's arguments, `undefined`
        /// there, is read at slot ROW_LANE + p through the view its caller names,
        /// [`super::form::LANE_NUMBERS`] or [`super::form::LANE_BIGINTS`]); or a lone
        /// row's values, all of them (see [`super::form::LANE_ROW`]).
        ROW_LANE: usize = QUEUE + QUEUE_SLOTS;
        /// The room in slots (a chunk's values past it travel as BigInt values).
        ROW_LANE_MAX: usize = 1024;
        /// How many slots there are.
        SLOTS: usize = ROW_LANE + ROW_LANE_MAX;
    }
}

/// A statement call's mode: better-sqlite3's row modes (`Data::FLAT/PLUCK/EXPAND/RAW`),
/// plus flags.
pub mod mode {
    wire! {
        FLAT: u32 = 0;
        PLUCK: u32 = 1;
        EXPAND: u32 = 2;
        RAW: u32 = 3;
        /// The bits of a mode that hold the row mode.
        MODE_BITS: u32 = 3;
        /// Added to a row mode: INTEGER values as BigInt (`stmt.safeIntegers()`).
        SAFE_INTEGERS: u32 = 4;
        /// Added to a mode: the parameters are one value per statement parameter, in
        /// order (read by the JS layer from a named-parameter object).
        IN_ORDER: u32 = 8;
    }
}

/// A statement call's first argument: its connection, its statement and the call's mode
/// in one number ([`CallKey`]), `(connection × KEY_STATEMENTS + statement) × KEY_MODES +
/// mode`, below 2^53 and so exact as a double. One number costs one read of a JS value
/// where three cost three, on every call.
pub mod key {
    wire! {
        /// The room of a call's mode ([`super::mode`]).
        KEY_MODES: u32 = 16;
        /// The room of statement numbers on one connection.
        KEY_STATEMENTS: u32 = 1 << 28;
        /// The room of connection handles.
        KEY_CONNECTIONS: u32 = 1 << 21;
    }
}

/// What a statement call is about to do (`facadeCheck`), and `db.transaction(fn)`'s
/// variants (`txBegin`).
pub mod kind {
    wire! {
        /// `get()`, `all()`.
        CHECK_READ: u32 = 0;
        /// `run()`: refused while an iterator is open, unless in unsafe mode.
        CHECK_WRITE: u32 = 1;
        /// `iterate()`: adds an iterator.
        CHECK_ITERATE: u32 = 2;
        /// Plain `BEGIN`.
        TX_BEGIN: u32 = 0;
        TX_DEFERRED: u32 = 1;
        TX_IMMEDIATE: u32 = 2;
        TX_EXCLUSIVE: u32 = 3;
        /// `db.prepare`'s number: id * STATEMENT_ID + returnsData * STATEMENT_READER +
        /// readonly * STATEMENT_READONLY.
        STATEMENT_ID: u32 = 4;
        STATEMENT_READER: u32 = 2;
        STATEMENT_READONLY: u32 = 1;
    }
}

/// What a row is built as in JS (`rows::forms`).
pub mod form {
    wire! {
        /// An object of the keys in order (FLAT rows).
        FORM_OBJECT: u32 = 0;
        /// An array of the values (RAW rows).
        FORM_ARRAY: u32 = 1;
        /// The value itself (PLUCK rows).
        FORM_VALUE: u32 = 2;
        /// better-sqlite3's `expand()` object: keys are (table, column) pairs.
        FORM_EXPANDED: u32 = 3;
        /// The row lane's views: none (every value a JS value), BigInt64Array (INTEGER
        /// values read as BigInt), Float64Array (numbers). A value `undefined` among a
        /// chunk's or a maker's values is read from the lane its caller names.
        LANE_NONE: u32 = 0;
        LANE_BIGINTS: u32 = 1;
        LANE_NUMBERS: u32 = 2;
        /// How many lanes there are.
        LANES: u32 = 3;
        /// ROW_FORM of a lone row of form `f` whose values are all in lane `l` but at
        /// most one, held: LANE_ROW - ((LANE_HELD_PLACES × f + h) × LANES + l), where `h`
        /// is 0 when no value is held, else the held value's place + 1. The call returns
        /// the held value, or `null` when there is none (`undefined` is an iterator's end).
        LANE_ROW: i32 = -2;
        /// How many places a held value may have, plus one (none).
        LANE_HELD_PLACES: u32 = 65;
    }
}

/// User callbacks' calls: the type of a result, an aggregate call's flags, and a queued
/// call's word (`callbacks::queue`).
pub mod group {
    wire! {
        /// A callback's result in CALL_RESULT_TYPE: another JS value, a number, a string.
        RESULT_OTHER: u32 = 0;
        RESULT_NUMBER: u32 = 1;
        RESULT_STRING: u32 = 2;
        /// The group's first call: its running value is made from `start` now.
        GROUP_NEW: u32 = 1;
        /// The group's last call: its running value is dropped after it.
        GROUP_FINAL: u32 = 2;
        /// Only drop the group's running value (a window's end, a failed result).
        GROUP_RELEASE: u32 = 4;
        /// The slots of a queued call before its arguments (two pairs of i32).
        QUEUED_HEADER: usize = 2;
        /// A queued call's kind.
        QUEUED_STEP: u32 = 0;
        QUEUED_INVERSE: u32 = 1;
        QUEUED_VALUE: u32 = 2;
        /// A queued call's word: flags | kind << QUEUED_KIND_SHIFT | argc << QUEUED_ARGC_SHIFT.
        QUEUED_KIND_SHIFT: u32 = 8;
        QUEUED_ARGC_SHIFT: u32 = 16;
        /// A queued argument's type, ARG_TYPE_BITS bits each in the types word.
        ARG_NULL: u32 = 0;
        ARG_INT32: u32 = 1;
        ARG_DOUBLE: u32 = 2;
        ARG_INT64: u32 = 3;
        ARG_TYPE_BITS: u32 = 2;
        /// How many registrations one delivery serves (the JS `deliver`'s parameters).
        QUEUE_RUNNERS: usize = 4;
    }
}

/// Every part of the wire.
const PARTS: [&[(&CStr, f64)]; 6] = [slot::ALL, mode::ALL, key::ALL, kind::ALL, form::ALL, group::ALL];

/// `native.protocol()`: an object of every number of the wire, by name.
#[napi]
pub fn protocol(env: Env) -> Result<Returned> {
    let js = Napi::new(env.raw());
    let made = (|| {
        let object = js.object()?;
        for (name, value) in PARTS.iter().flat_map(|part| part.iter()) {
            js.set_named_property(object, name, js.number(*value)?)?;
        }
        Ok(Returned(object))
    })();
    made.map_err(|e: crate::error::StoreError| e.throw(env.raw()))
}

/// better-sqlite3's row modes as the JS layer numbers them ([`mode`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RowMode {
    Flat,
    Pluck,
    Expand,
    Raw,
}

impl RowMode {
    /// The row mode of a statement call's mode.
    pub fn from_wire(mode: u32) -> Self {
        match mode & mode::MODE_BITS {
            mode::PLUCK => RowMode::Pluck,
            mode::EXPAND => RowMode::Expand,
            mode::RAW => RowMode::Raw,
            _ => RowMode::Flat,
        }
    }
}

/// What a statement call is about to do, for the checks better-sqlite3 makes before it
/// reads a named-parameter object (`facadeCheck`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Read,
    Write,
    Iterate,
}

impl CallKind {
    pub fn from_wire(kind: u32) -> Self {
        match kind {
            kind::CHECK_WRITE => CallKind::Write,
            kind::CHECK_ITERATE => CallKind::Iterate,
            _ => CallKind::Read,
        }
    }
}

/// `db.transaction(fn)`'s variants (plain `BEGIN` is deferred).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    Deferred,
    Immediate,
    Exclusive,
}

impl TxKind {
    pub fn from_wire(kind: u32) -> Self {
        match kind {
            kind::TX_IMMEDIATE => TxKind::Immediate,
            kind::TX_EXCLUSIVE => TxKind::Exclusive,
            _ => TxKind::Deferred,
        }
    }
}

/// A statement call's connection, statement and mode, read from the number the JS layer
/// packed them in ([`key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallKey {
    pub db: u32,
    pub id: u32,
    pub mode: u32,
}

impl CallKey {
    /// The key a JS value holds; an error for anything else (not a number, not an
    /// integer, out of range).
    pub fn from_js(js: Napi, value: Raw) -> Result<CallKey> {
        js.number_value(value)
            .and_then(CallKey::from_number)
            .ok_or_else(|| Error::from_reason("a native statement call has a bad key"))
    }

    /// A variadic statement call's key, then the statement's parameters.
    pub fn split(js: Napi, args: &[Raw]) -> Result<(CallKey, &[Raw])> {
        match args.split_first() {
            Some((&key, params)) => Ok((CallKey::from_js(js, key)?, params)),
            None => Err(Error::from_reason("a native statement call lacks its key")),
        }
    }

    fn from_number(number: f64) -> Option<CallKey> {
        const ROOM: f64 = (key::KEY_CONNECTIONS as f64) * (key::KEY_STATEMENTS as f64) * (key::KEY_MODES as f64);
        // The conversion saturates and truncates: a number it changes is no key.
        let packed = number as u64;
        if !(number < ROOM && packed as f64 == number) {
            return None;
        }
        let (modes, statements) = (u64::from(key::KEY_MODES), u64::from(key::KEY_STATEMENTS));
        // Each part is below its room, so each fits a u32.
        Some(CallKey {
            mode: (packed % modes) as u32,
            id: (packed / modes % statements) as u32,
            db: (packed / modes / statements) as u32,
        })
    }

    /// Whether a connection handle or a statement number fits a key.
    pub fn fits(db: u32, id: u32) -> bool {
        db < key::KEY_CONNECTIONS && id < key::KEY_STATEMENTS
    }
}

/// `db.prepare`'s number for statement `id` ([`kind::STATEMENT_ID`]).
pub fn pack_statement(id: u32, returns_data: bool, readonly: bool) -> f64 {
    f64::from(id) * f64::from(kind::STATEMENT_ID)
        + if returns_data {
            f64::from(kind::STATEMENT_READER)
        } else {
            0.0
        }
        + if readonly {
            f64::from(kind::STATEMENT_READONLY)
        } else {
            0.0
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_keys_unpack() {
        let pack = |db: u32, id: u32, mode: u32| {
            (f64::from(db) * f64::from(key::KEY_STATEMENTS) + f64::from(id)) * f64::from(key::KEY_MODES)
                + f64::from(mode)
        };
        for (db, id, mode) in [
            (0, 0, 0),
            (3, 7, 9),
            (key::KEY_CONNECTIONS - 1, key::KEY_STATEMENTS - 1, 15),
        ] {
            assert_eq!(CallKey::from_number(pack(db, id, mode)), Some(CallKey { db, id, mode }));
        }
        assert_eq!(
            pack(key::KEY_CONNECTIONS - 1, key::KEY_STATEMENTS - 1, 15),
            2f64.powi(53) - 1.0
        );
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 2f64.powi(53)] {
            assert_eq!(CallKey::from_number(bad), None, "{bad}");
        }
        assert!(CallKey::fits(key::KEY_CONNECTIONS - 1, key::KEY_STATEMENTS - 1));
        assert!(!CallKey::fits(key::KEY_CONNECTIONS, 0) && !CallKey::fits(0, key::KEY_STATEMENTS));
    }

    #[test]
    fn statement_numbers_pack() {
        assert_eq!(pack_statement(5, true, false), 22.0);
    }

    #[test]
    fn names_are_unique_and_the_slots_dense() {
        let names: Vec<&CStr> = PARTS
            .iter()
            .flat_map(|part| part.iter().map(|(name, _)| *name))
            .collect();
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "every wire name once");
        // The single slots, then the call arguments and the queue: no slot unused.
        let singles = [
            slot::LAST_ROWID,
            slot::LAST_ROWID_BITS,
            slot::ROW_FORM,
            slot::BUSY,
            slot::CALLBACKS,
            slot::CALL_SHARED,
            slot::CALL_RESULT_TYPE,
            slot::CALL_RESULT,
            slot::CALL_STATE,
            slot::CALL_FLAGS,
        ];
        let mut sorted = singles.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..singles.len()).collect::<Vec<_>>());
        assert_eq!(slot::CALL_ARGS, singles.len());
        assert_eq!(slot::QUEUE_LEN, slot::CALL_ARGS + slot::CALL_ARGS_MAX);
        assert_eq!(slot::ROW_LANE, slot::QUEUE + slot::QUEUE_SLOTS);
        assert_eq!(slot::SLOTS, slot::ROW_LANE + slot::ROW_LANE_MAX);
    }
}
