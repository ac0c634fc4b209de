'use strict';
// Safe-integer results (`stmt.safeIntegers()`: INTEGER values as BigInt) as the native
// side leaves them (src/facade/safe_rows.rs): as cells in memory shared with it
// (src/js/cells.rs: 8 bytes per value, an INTEGER read as a BigInt straight from a
// BigInt64Array view, then one type byte per value; TEXT and BLOB values in order in a
// JSON text returned by the call), or, for EXPAND rows and iterators, as JS values (a
// FLAT row as an array of its values). Either way a FLAT row is built by its shape's
// maker, like the JSON rows (lib/protocol.cjs).

const native = require('./native.cjs');
const { RowMode, decode, makerOf } = require('./protocol.cjs');

const { FLAT, PLUCK, RAW } = RowMode;
// Result slots (src/js/slots.rs) and cell types (src/js/cells.rs).
const ROW_SHAPE = 1;
const CELLS_GEN = 3;
const CELL_ROWS = 4;
const CELL_COLUMNS = 5;
const INTEGER = 1;
const REAL = 2;
const SIDE = 3;

let slots = null;
native.onLoad(() => {
  slots = native.resultSlots();
});

// Views of the current shared buffer, made again when the native side replaced it.
let generation = 0;
let big = null;
let real = null;
let types = null;
// The side values of the result being read, and the next one's index.
let side = null;
let next = 0;
let scratch = [];

function refreshViews() {
  const buffer = native.cellBuffer();
  const capacity = buffer.byteLength / 9;
  big = new BigInt64Array(buffer, 0, capacity);
  real = new Float64Array(buffer, 0, capacity);
  types = new Uint8Array(buffer, 8 * capacity, capacity);
  generation = slots[CELLS_GEN];
}

function cell(k) {
  switch (types[k]) {
    case INTEGER:
      return big[k];
    case REAL:
      return real[k];
    case SIDE:
      return side[next++];
    default:
      return null;
  }
}

/** The rows (or the one row of a `get`, undefined for none) of a result left as cells. */
function fromCells(mode, text, single) {
  const count = slots[CELL_ROWS];
  const columns = slots[CELL_COLUMNS];
  if (slots[CELLS_GEN] !== generation) refreshViews();
  side = text === undefined ? null : decode(text);
  next = 0;
  if (count === 0) return single ? undefined : [];
  if (mode === PLUCK) {
    if (single) return cell(0);
    const values = new Array(count);
    for (let i = 0; i < count; i++) values[i] = cell(i);
    return values;
  }
  if (mode === RAW) {
    const rows = new Array(count);
    for (let r = 0, k = 0; r < count; r++) {
      const row = new Array(columns);
      for (let c = 0; c < columns; c++) row[c] = cell(k++);
      rows[r] = row;
    }
    return single ? rows[0] : rows;
  }
  const shape = slots[ROW_SHAPE];
  const make = makerOf(shape >= 0 ? shape : side[side.length - 1]);
  // A row's values are read by its maker into a new object: one array serves every row.
  if (scratch.length < columns) scratch = new Array(columns);
  const values = scratch;
  if (single) {
    for (let c = 0; c < columns; c++) values[c] = cell(c);
    return make(values);
  }
  const rows = new Array(count);
  for (let r = 0, k = 0; r < count; r++) {
    for (let c = 0; c < columns; c++) values[c] = cell(k++);
    rows[r] = make(values);
  }
  return rows;
}

/** A FLAT row of safe integers from its values, or undefined. */
function rowOfValues(values) {
  if (values === undefined) return undefined;
  const shape = slots[ROW_SHAPE];
  return makerOf(shape >= 0 ? shape : values.pop())(values);
}

/** The FLAT rows of safe integers from their arrays of values. */
function rowsOfValues(rows) {
  if (rows.length === 0) return rows;
  const shape = slots[ROW_SHAPE];
  const make = makerOf(shape >= 0 ? shape : rows.pop());
  for (let i = 0; i < rows.length; i++) rows[i] = make(rows[i]);
  return rows;
}

/**
 * The result of a safe-integer `get` (`single`) or `all`/`pragma` call in row mode
 * `mode` (without the SAFE_INTEGERS flag), `out` being what the call returned.
 */
function safeResult(mode, out, single) {
  if (slots[CELL_ROWS] >= 0) return fromCells(mode, out, single);
  if (mode !== FLAT) return out;
  return single ? rowOfValues(out) : rowsOfValues(out);
}

module.exports = { safeResult, rowOfValues };
