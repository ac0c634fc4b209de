'use strict';
// The wire between this glue and the native side, defined here once (its Rust twin is
// src/js/protocol.rs). Keep both in step.
//
// - Rows and results travel as JSON text that Rust writes and JS parses once.
//   A text starting with U+0001 holds marker objects `{"\u0000tfx": ...}` that stand for
//   values JSON cannot carry: NaN (`"NaN"`) and BLOBs (`"blob"`, base64 in `data`).
// - A statement's rows are `[shape, [v, …], …]` (src/js/rows.rs): `shape` is the number of
//   a row shape whose keys `native.rowKeys(shape)` gives, or the keys themselves. Each
//   shape's rows are built by one function made for it (see rowMaker).
// - An empty string means `undefined` (the end of an iterator, a pragma with no row).
// - `db.prepare` returns one number: statement id * 4 + returnsData * 2 + readonly.
// - Row modes are numbers: FLAT 0, PLUCK 1, EXPAND 2, RAW 3; plus SAFE_INTEGERS (4) for
//   BigInt reads, whose FLAT rows come as arrays of values under a shape (see makerOf).
// - Transaction kinds for `txBegin`: 0 plain BEGIN, 1 DEFERRED, 2 IMMEDIATE, 3 EXCLUSIVE.

const native = require('./native.cjs');

const MARKER = '\u0000tfx';
const WITH_MARKERS = 1; // char code of U+0001

const RowMode = Object.freeze({ FLAT: 0, PLUCK: 1, EXPAND: 2, RAW: 3 });
/** Added to a row mode: INTEGER values as BigInt, rows built as JS values (src/facade/safe_rows.rs). */
const SAFE_INTEGERS = 4;
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

/**
 * A function building a row object of these keys from an array of values: an object
 * literal, so that V8 gives every row of the shape one hidden class and fills it at
 * once. Keys are written as JSON string literals (any text is safe there); a
 * `__proto__` key is a computed key, which defines an own property as better-sqlite3
 * does instead of setting the prototype. Duplicate keys keep their first position and
 * the last value, as better-sqlite3's rows do. Where code generation from strings is
 * disallowed (--disallow-code-generation-from-strings), properties are defined one by one.
 */
function rowMaker(keys) {
  const fields = keys.map((key, i) => `${key === '__proto__' ? '["__proto__"]' : JSON.stringify(key)}: v[${i}]`);
  try {
    return new Function('v', `return { ${fields.join(', ')} };`);
  } catch {
    return (v) => {
      const row = {};
      keys.forEach((key, i) => Object.defineProperty(row, key, { value: v[i], writable: true, enumerable: true, configurable: true }));
      return row;
    };
  }
}

/** Row makers by shape number (the numbers are this thread's, like this module). */
const makers = [];

function makerOf(shape) {
  if (typeof shape !== 'number') return rowMaker(shape);
  return makers[shape] ?? (makers[shape] = rowMaker(native.rowKeys(shape)));
}

/** The rows of a `[shape, …rows]` text. */
function decodeRows(text) {
  const parsed = decode(text);
  const make = makerOf(parsed[0]);
  const rows = new Array(parsed.length - 1);
  for (let i = 1; i < parsed.length; i++) rows[i - 1] = make(parsed[i]);
  return rows;
}

/** The row of shape `shape` whose one value is `value` (a FLAT `get` of one column). */
function rowOfValue(shape, value) {
  return makerOf(shape)([value]);
}

/** The row of a `[shape, row]` text, or undefined for `''`. */
function decodeRow(text) {
  if (text === '') return undefined;
  const parsed = decode(text);
  return makerOf(parsed[0])(parsed[1]);
}

/** Unpacks `db.prepare`'s number. */
function unpackStatement(packed) {
  return { id: Math.floor(packed / 4), reader: (packed & 2) !== 0, readonly: (packed & 1) !== 0 };
}

module.exports = { RowMode, SAFE_INTEGERS, TxKind, decode, decodeOptional, decodeRow, decodeRows, makerOf, rowOfValue, unpackStatement };
