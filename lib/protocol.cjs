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
// - `expand()` rows are `[pairs, [v, …], …]`: `pairs` gives each column's table ("$" for
//   an expression) and name, `[table, column, …]`; the glue groups them (expandedRow).
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
 * How better-sqlite3 builds a FLAT row on this Node. Built for Node 22 and later (V8
 * module version 127+), it makes the object in one call from its keys and values: every
 * key an own data property, `__proto__` included. Built for older Nodes it assigns the
 * columns one by one to a fresh object, so a `__proto__` column goes through
 * Object.prototype's setter: an object or null value becomes the row's prototype, any
 * other value is dropped. Either way a repeated key keeps its first position and the last
 * value.
 */
const ROWS_BY_ASSIGNMENT = Number(process.versions.modules) < 127;

/** A row built by assigning each column in order, as `[[Set]]` does (never throws). */
function assignedRow(keys, v) {
  const row = {};
  for (let i = 0; i < keys.length; i++) Reflect.set(row, keys[i], v[i]);
  return row;
}

/**
 * A function building a row object of these keys from an array of values: an object
 * literal, so that V8 gives every row of the shape one hidden class and fills it at
 * once. Keys are written as JSON string literals (any text is safe there); a
 * `__proto__` key is a computed key, which defines an own property as better-sqlite3
 * does on Node 22+ (older Nodes assign it: ROWS_BY_ASSIGNMENT). An object literal keeps
 * a repeated key's first position and last value, as better-sqlite3's rows do. Where
 * code generation from strings is disallowed (--disallow-code-generation-from-strings),
 * properties are defined one by one.
 */
function rowMaker(keys) {
  if (ROWS_BY_ASSIGNMENT && keys.includes('__proto__')) return (v) => assignedRow(keys, v);
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

/**
 * An `expand()` row from `[table, column, …]` pairs and the values, built as
 * better-sqlite3's `GetExpandedRowJS` builds it on every Node: per column, a table that
 * is not yet an own property of the row gets a fresh object assigned, then the column is
 * assigned to the table's object (`[[Set]]` both: a `__proto__` table or column goes
 * through Object.prototype's setter).
 */
function expandedRow(pairs, v) {
  const row = {};
  for (let i = 0; i < v.length; i++) {
    const table = pairs[2 * i];
    let nested;
    if (Object.hasOwn(row, table)) {
      nested = row[table];
    } else {
      nested = {};
      Reflect.set(row, table, nested);
    }
    Reflect.set(nested, pairs[2 * i + 1], v[i]);
  }
  return row;
}

/** The rows of an `expand()` text `[pairs, values, …]`. */
function decodeExpandedRows(text) {
  const parsed = decode(text);
  const pairs = parsed[0];
  const rows = new Array(Math.max(parsed.length - 1, 0));
  for (let i = 1; i < parsed.length; i++) rows[i - 1] = expandedRow(pairs, parsed[i]);
  return rows;
}

/** The row of an `expand()` text `[pairs, values]`, or undefined for `''`. */
function decodeExpandedRow(text) {
  if (text === '') return undefined;
  const parsed = decode(text);
  return expandedRow(parsed[0], parsed[1]);
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

// A FLAT `get()` row of a few columns left in the result slots (src/facade/slotted.rs):
// per column a kind and a number from ROW_COLUMNS on, every TEXT value in one string.
const ROW_COLUMNS = 7;
const KIND_NUMBER = 0;
const KIND_TEXT = 1;

/**
 * A function building a row of these keys from the slots `s` and the row's texts `t`:
 * each column's value read by its kind (a TEXT value is the next piece of `t`), then the
 * row built as rowMaker builds it.
 */
function slottedMaker(keys) {
  if (!(ROWS_BY_ASSIGNMENT && keys.includes('__proto__'))) {
    const fields = keys.map((key, i) => {
      const kind = ROW_COLUMNS + 2 * i;
      const read = `(k = s[${kind}]) === ${KIND_NUMBER} ? s[${kind + 1}] : k === ${KIND_TEXT} ? t.slice(p, (p = s[${kind + 1}])) : null`;
      return `${key === '__proto__' ? '["__proto__"]' : JSON.stringify(key)}: ${read}`;
    });
    try {
      return new Function('s', 't', `let p = 0, k; return { ${fields.join(', ')} };`);
    } catch {
      // No code generation from strings: read the values in a loop (below).
    }
  }
  const make = rowMaker(keys);
  return (s, t) => {
    const values = new Array(keys.length);
    let p = 0;
    for (let i = 0; i < keys.length; i++) {
      const kind = s[ROW_COLUMNS + 2 * i];
      const n = s[ROW_COLUMNS + 2 * i + 1];
      values[i] = kind === KIND_NUMBER ? n : kind === KIND_TEXT ? t.slice(p, (p = n)) : null;
    }
    return make(values);
  };
}

const slottedMakers = [];

/** The row of shape `shape` left in the slots `s`, its texts in `t`. */
function slottedRow(shape, s, t) {
  return (slottedMakers[shape] ?? (slottedMakers[shape] = slottedMaker(native.rowKeys(shape))))(s, t);
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

module.exports = {
  RowMode,
  SAFE_INTEGERS,
  TxKind,
  decode,
  decodeExpandedRow,
  decodeExpandedRows,
  decodeOptional,
  decodeRow,
  decodeRows,
  makerOf,
  rowOfValue,
  slottedRow,
  unpackStatement,
};
