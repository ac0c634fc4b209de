'use strict';
// The wire between this glue and the native side, defined here once (its Rust twin is
// src/js/protocol.rs). Keep both in step.
//
// - Rows and results travel as JSON text that Rust writes and JS parses once.
//   A text starting with U+0001 holds marker objects `{"\u0000tfx": ...}` that stand for
//   values JSON cannot carry: NaN (`"NaN"`) and BLOBs (`"blob"`, base64 in `data`).
// - An empty string means `undefined` (the end of an iterator, a pragma with no row).
// - `db.prepare` returns one number: statement id * 4 + returnsData * 2 + readonly.
// - Row modes are numbers: FLAT 0, PLUCK 1, EXPAND 2, RAW 3.
// - Transaction kinds for `txBegin`: 0 plain BEGIN, 1 DEFERRED, 2 IMMEDIATE, 3 EXCLUSIVE.

const MARKER = '\u0000tfx';
const WITH_MARKERS = 1; // char code of U+0001

const RowMode = Object.freeze({ FLAT: 0, PLUCK: 1, EXPAND: 2, RAW: 3 });
const TxKind = Object.freeze({ BEGIN: 0, DEFERRED: 1, IMMEDIATE: 2, EXCLUSIVE: 3 });

function revive(_key, value) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value[MARKER] === 'string') {
    if (value[MARKER] === 'NaN') return NaN;
    if (value[MARKER] === 'blob') return Buffer.from(value.data, 'base64');
  }
  return value;
}

/** Parses a JSON text from the native side. */
function decode(text) {
  return text.charCodeAt(0) === WITH_MARKERS ? JSON.parse(text.slice(1), revive) : JSON.parse(text);
}

/** `''` (undefined) or a JSON text. */
function decodeOptional(text) {
  return text === '' ? undefined : decode(text);
}

/** Unpacks `db.prepare`'s number. */
function unpackStatement(packed) {
  return { id: Math.floor(packed / 4), reader: (packed & 2) !== 0, readonly: (packed & 1) !== 0 };
}

module.exports = { RowMode, TxKind, decode, decodeOptional, unpackStatement };
