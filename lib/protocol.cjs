'use strict';
// The wire between this glue and the native side, defined here once (its Rust twin is
// src/js/protocol.rs). Keep both in step.
//
// - Rows are JS values made on the native side and built into rows by lib/rows.cjs.
// - A few results that are not rows (`stmt.columns()`, the store's statistics) travel
//   as JSON text that Rust writes and JS parses once.
// - `db.prepare` returns one number: statement id * 4 + returnsData * 2 + readonly.
// - Row modes are numbers: FLAT 0, PLUCK 1, EXPAND 2, RAW 3; plus SAFE_INTEGERS (4) for
//   INTEGER values as BigInt.
// - Transaction kinds for `txBegin`: 0 plain BEGIN, 1 DEFERRED, 2 IMMEDIATE, 3 EXCLUSIVE.

const RowMode = Object.freeze({ FLAT: 0, PLUCK: 1, EXPAND: 2, RAW: 3 });
/** Added to a row mode: INTEGER values as BigInt. */
const SAFE_INTEGERS = 4;
const TxKind = Object.freeze({ BEGIN: 0, DEFERRED: 1, IMMEDIATE: 2, EXCLUSIVE: 3 });

/** Parses a JSON text from the native side. */
function decode(text) {
  return JSON.parse(text);
}

/** Unpacks `db.prepare`'s number. */
function unpackStatement(packed) {
  return { id: Math.floor(packed / 4), reader: (packed & 2) !== 0, readonly: (packed & 1) !== 0 };
}

module.exports = { RowMode, SAFE_INTEGERS, TxKind, decode, unpackStatement };
