'use strict';
// Rows from the native side (src/engine/rows/), built here and nowhere else. Rust hands over
// values (numbers, strings, Buffers, BigInts, null, made as better-sqlite3 makes them) and
// the number of the rows' form; a form's description (`native.rowForm(id)`) is read once
// and compiled into one function that builds a row of it from the values, so that every
// row of a form gets one hidden class and is filled at once.
//
// - Many rows (`all()`, the store's reads): the native side calls `fill` with a chunk of
//   rows' values as its arguments; it appends the rows to the result array.
// - One row (`get()`, an iterator's `next()`, `pragma(…, { simple: true })`): a plucked
//   row comes back as its value, a small BLOB as its ArrayBuffer (`loneValue` wraps
//   it), with no form written; in any other mode a row of one value comes back as that
//   value (a small BLOB as its ArrayBuffer) with its form in the ROW_FORM result slot
//   (`rowResult` wraps it); a row of several values that are all
//   numbers (or all BigInts) but at most one comes back in the row lane, its form, lane
//   and the place of the one other value (the call's result) coded in ROW_FORM
//   (`rowResult` builds it); any other row of several values is made by its
//   form's maker (`makerOf`), which the native side calls with the values as its
//   arguments; a row with stored JSON comes back built by `fill`.
// - The store's stored JSON columns travel as one JSON array text per chunk, parsed once
//   and read in order by the rows' makers.
// - A chunk's small BLOBs come as ArrayBuffers, each wrapped here as the Buffer
//   better-sqlite3 would have made (cheaper than a Buffer made through Node-API).
// - Numbers (a chunk's, or a lone row's for its maker) come as `undefined` in their
//   places, their 64 bits in the row lane at the same places (the result slots from
//   ROW_LANE on, the value at position p of the chunk's values or of the maker's
//   arguments at lane slot p), read there by the lane variants of the makers through a
//   Float64Array, or a BigInt64Array for INTEGER values read as BigInt (cheaper than a
//   number or BigInt made through Node-API).

const native = require('../native.cjs');
const { CAN_GENERATE } = require('./codegen.cjs');
const {
  FORM_OBJECT: OBJECT,
  FORM_ARRAY: ARRAY,
  FORM_VALUE: VALUE,
  FORM_EXPANDED: EXPANDED,
  LANE_BIGINTS,
  LANE_HELD_PLACES,
  LANE_NONE,
  LANE_ROW,
  LANES,
  ROW_FORM,
  ROW_LANE,
  ROW_LANE_MAX,
} = require('../protocol.cjs');

const SLOTS_DETACHED = "This environment's result slots were detached (their ArrayBuffer was transferred): rows can no longer be read";

/** The result slots; ROW_FORM holds the form of a lone value, -1, or a lane row's code. */
let slots = null;
/** The row lane, the slots from ROW_LANE on: as 64-bit integers (BigInts) and as doubles. */
let bigintLane = null;
let numberLane = null;

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

/** A key as an object literal's property name (`__proto__` computed, so it is an own property). */
const literalKey = (key) => (key === '__proto__' ? '["__proto__"]' : JSON.stringify(key));

/** A row object of `keys` from `values(i)`, built by assigning each key in order, as `[[Set]]` does. */
function assignedRow(keys, value) {
  const row = {};
  for (let i = 0; i < keys.length; i++) Reflect.set(row, keys[i], value(i));
  return row;
}

/** A row object of `keys` from `value(i)`, each key an own data property. */
function definedRow(keys, value) {
  const row = {};
  for (let i = 0; i < keys.length; i++) {
    Object.defineProperty(row, keys[i], { value: value(i), writable: true, enumerable: true, configurable: true });
  }
  return row;
}

/** Parameter names of a maker that takes `width` values as its arguments. */
const params = (width) => Array.from({ length: width }, (_, i) => `a${i}`);

/**
 * The makers of an object form: `make(v, o, j, jo)` takes the row's `width` values from
 * `v[o]` on and its `json` parsed values from `j[jo]` on; `one(a)` a row of the one value
 * `a`; `args(a0, a1, …)` a row of its arguments (a form with no stored JSON). Given a
 * lane's view `L`, `laneMake(L)` and `laneArgs(L)` return the same makers, a value that
 * is `undefined` read from `L` at its place, and `laneRow(L)` one that reads the row's
 * values from `L` alone. An object literal where code generation works (one hidden class
 * per form; a repeated key keeps its first position and last value, as better-sqlite3's
 * rows do).
 */
function objectMakers(keys, width) {
  if ((ROWS_BY_ASSIGNMENT && keys.includes('__proto__')) || !CAN_GENERATE) {
    const build = ROWS_BY_ASSIGNMENT && keys.includes('__proto__') ? assignedRow : definedRow;
    return {
      make: (v, o, j, jo) => build(keys, (i) => (i < width ? v[o + i] : j[jo + i - width])),
      one: (a) => build(keys, () => a),
    };
  }
  const fields = (read) => keys.map((key, i) => `${literalKey(key)}: ${read(i)}`).join(', ');
  const plain = (i) => (i < width ? `v[o + ${i}]` : `j[jo + ${i - width}]`);
  const laned = (i) => (i < width ? `(x = v[o + ${i}]) === undefined ? L[o + ${i}] : x` : `j[jo + ${i - width}]`);
  const makers = {
    make: new Function('v', 'o', 'j', 'jo', `return { ${fields(plain)} };`),
    one: new Function('a', `return { ${keys.map((key) => `${literalKey(key)}: a`).join(', ')} };`),
    laneMake: (L) => withLane(`function (v, o, j, jo) { let x; return { ${fields(laned)} }; }`, L),
  };
  if (keys.length === width) {
    const names = params(width);
    makers.args = new Function(...names, `return { ${fields((i) => names[i])} };`);
    makers.laneArgs = (L) =>
      withLane(
        `function (${names}) { if (L.length === 0) detached(); return { ${fields((i) => `${names[i]} === undefined ? L[${i}] : ${names[i]}`)} }; }`,
        L,
      );
    makers.laneRow = (L) => withLane(`function () { return { ${fields((i) => `L[${i}]`)} }; }`, L);
    makers.laneHeld = (L) => withLane(`function (p, a) { return { ${fields((i) => `p === ${i} ? a : L[${i}]`)} }; }`, L);
  }
  return makers;
}

/** A generated function whose code reads the lane view `L` (and may call `detached()`). */
const withLane = (code, L) => new Function('L', 'detached', `return ${code};`)(L, detached);

function detached() {
  throw new TypeError(SLOTS_DETACHED);
}

/** The makers of an array form of `width` values (RAW rows). */
function arrayMakers(width) {
  if (CAN_GENERATE && width <= 16) {
    const items = Array.from({ length: width }, (_, i) => `v[o + ${i}]`).join(', ');
    const laned = Array.from({ length: width }, (_, i) => `(x = v[o + ${i}]) === undefined ? L[o + ${i}] : x`).join(', ');
    const names = params(width);
    return {
      make: new Function('v', 'o', `return [${items}];`),
      one: (a) => [a],
      args: new Function(...names, `return [${names.join(', ')}];`),
      laneMake: (L) => withLane(`function (v, o) { let x; return [${laned}]; }`, L),
      laneArgs: (L) =>
        withLane(`function (${names}) { if (L.length === 0) detached(); return [${names.map((n, i) => `${n} === undefined ? L[${i}] : ${n}`)}]; }`, L),
      laneRow: (L) => withLane(`function () { return [${Array.from({ length: width }, (_, i) => `L[${i}]`)}]; }`, L),
      laneHeld: (L) => withLane(`function (p, a) { return [${Array.from({ length: width }, (_, i) => `p === ${i} ? a : L[${i}]`)}]; }`, L),
    };
  }
  return { make: (v, o) => v.slice(o, o + width), one: (a) => [a] };
}

/**
 * An `expand()` row from `[table, column, …]` pairs and the values from `v[o]` on, built
 * as better-sqlite3's `GetExpandedRowJS` builds it on every Node: per column, a table that
 * is not yet an own property of the row gets a fresh object assigned, then the column is
 * assigned to the table's object (`[[Set]]` both: a `__proto__` table or column goes
 * through Object.prototype's setter).
 */
function expandedRow(pairs, v, o) {
  const row = {};
  for (let i = 0; 2 * i < pairs.length; i++) {
    const table = pairs[2 * i];
    let nested;
    if (Object.hasOwn(row, table)) {
      nested = row[table];
    } else {
      nested = {};
      Reflect.set(row, table, nested);
    }
    Reflect.set(nested, pairs[2 * i + 1], v[o + i]);
  }
  return row;
}

/** A form from its description `[kind, width, json, ...keys]` (strings). */
function compile(items) {
  const kind = Number(items[0]);
  const width = Number(items[1]);
  const json = Number(items[2]);
  const keys = items.slice(3);
  let makers;
  if (kind === OBJECT) makers = objectMakers(keys, width);
  else if (kind === ARRAY) makers = arrayMakers(width);
  else if (kind === VALUE) makers = { make: (v, o) => v[o], one: (a) => a, laneMake: (L) => (v, o) => (v[o] === undefined ? L[o] : v[o]) };
  else if (kind === EXPANDED) makers = { make: (v, o) => expandedRow(keys, v, o), one: (a) => expandedRow(keys, [a], 0) };
  else throw new Error(`triflux-native-store: unknown row form kind ${items[0]}`);
  const { make, one } = makers;
  const args = makers.args ?? ((...values) => make(values, 0, undefined, 0));
  // Where no lane variant was generated: the row's lane values put in place first.
  const laneMake = makers.laneMake ?? ((L) => (v, o, j, jo) => make(fromLane(v, o, width, L), o, j, jo));
  const laneArgs = makers.laneArgs ?? ((L) => (...values) => make(fromLane(values, 0, values.length, L), 0, undefined, 0));
  const laneHeld = makers.laneHeld ?? ((L) => (p, a) => make(laneValues(L, width, p, a), 0, undefined, 0));
  const laneRow = makers.laneRow ?? ((L) => () => make(laneValues(L, width, -1, undefined), 0, undefined, 0));
  return {
    width,
    json,
    make,
    one,
    args,
    // By MAKE, ARGS, ROW and HELD: the factory of the maker reading a lane, and the makers
    // made so far by lane (the plain make and args at LANE_NONE).
    laneFactories: [laneMake, laneArgs, laneRow, laneHeld],
    laned: [[make], [args], [], []],
  };
}

/** A row's `width` values read from lane `L`, but `a` at place `p`. */
function laneValues(L, width, p, a) {
  if (L.length === 0) detached();
  const values = new Array(width);
  for (let i = 0; i < width; i++) values[i] = i === p ? a : L[i];
  return values;
}

/** `v` with each `undefined` from `v[o]` to `v[o + n - 1]` replaced by its value in lane `L`. */
function fromLane(v, o, n, L) {
  if (L.length === 0) detached();
  for (let i = o; i < o + n; i++) if (v[i] === undefined) v[i] = L[i];
  return v;
}

/** The lane view of lane `lane` (LANE_BIGINTS or LANE_NUMBERS). */
const laneView = (lane) => (lane === LANE_BIGINTS ? bigintLane : numberLane);

/**
 * The kinds of makers a form has for a lane: `make`, `args`, a row read from the lane
 * alone, and a row read from it but for one value held elsewhere (`(place, value)`).
 */
const MAKE = 0;
const ARGS = 1;
const ROW = 2;
const HELD = 3;

/** `compiled`'s maker of `kind` whose lane values are read from `lane`, made when first asked for. */
function lanedMaker(compiled, kind, lane) {
  const made = compiled.laned[kind];
  const maker = made[lane];
  return maker !== undefined ? maker : (made[lane] = compiled.laneFactories[kind](laneView(lane)));
}

/** Compiled forms by number (the numbers are this thread's, like this module). */
const forms = [];

function formOf(form) {
  if (typeof form !== 'number') return compile(form);
  return forms[form] ?? (forms[form] = compile(native.rowForm(form)));
}

const bufferOf = Buffer.from;

/** Makes the `wrapped` ArrayBuffers among `values` the Buffers over them. */
function wrapBlobs(values, wrapped) {
  for (let i = 0; wrapped > 0 && i < values.length; i++) {
    const value = values[i];
    if (value instanceof ArrayBuffer) {
      values[i] = bufferOf(value);
      wrapped--;
    }
  }
}

/**
 * Called by the native side: builds `count` rows of `form` from `values` and appends them
 * to `rows` (returned), or returns the one row when `rows` is null. `json` is the JSON
 * array text of the rows' stored JSON columns, or undefined; `wrapped` how many values
 * are ArrayBuffers to wrap as Buffers; `lane` the lane the `undefined` values are read
 * from (LANE_NONE: none is).
 */
function fill(rows, form, count, json, wrapped, lane, ...values) {
  if (wrapped > 0) wrapBlobs(values, wrapped);
  const compiled = formOf(form);
  const { width, json: perRow } = compiled;
  let make = compiled.make;
  if (lane !== LANE_NONE) {
    if (bigintLane.length === 0) detached();
    make = lanedMaker(compiled, MAKE, lane);
  }
  const parsed = json === undefined ? undefined : JSON.parse(json);
  if (rows === null) return make(values, 0, parsed, 0);
  let n = rows.length;
  for (let r = 0, o = 0, jo = 0; r < count; r++, o += width, jo += perRow) rows[n++] = make(values, o, parsed, jo);
  return rows;
}

/**
 * Called by the native side once per form and lane: the function that makes a row of
 * `form` from its values as arguments, those that are `undefined` read from `lane`.
 */
function makerOf(form, lane) {
  return lanedMaker(formOf(form), ARGS, lane);
}

/**
 * A one-row result as the native call returned it: the row, or a lone value wrapped by
 * its form (a small BLOB comes as its ArrayBuffer, made its Buffer here).
 */
function rowResult(out) {
  const form = slots[ROW_FORM];
  if (form < 0) return form === -1 ? out : lanedRow(LANE_ROW - form, out);
  // Unreadable once someone transferred the slots' ArrayBuffer away (Node 22 and later
  // let JS detach it): the row's form is lost with it.
  if (form === undefined) detached();
  return formOf(form).one(loneValue(out));
}

/**
 * A lone row whose values are in the row lane but the one held, `out` (none when `held`
 * is 0, else its place + 1): `code` is (form × LANE_HELD_PLACES + held) × LANES + lane.
 */
function lanedRow(code, out) {
  const lane = code % LANES;
  const rest = (code - lane) / LANES;
  const held = rest % LANE_HELD_PLACES;
  const compiled = formOf((rest - held) / LANE_HELD_PLACES);
  return held === 0 ? lanedMaker(compiled, ROW, lane)() : lanedMaker(compiled, HELD, lane)(held - 1, out);
}

/**
 * A lone value as it crossed, a small BLOB's ArrayBuffer wrapped as its Buffer: what a
 * form's `one` is given, and a plucked row's result (`undefined`: no row), for which the
 * native side writes no form.
 */
function loneValue(out) {
  return out instanceof ArrayBuffer ? bufferOf(out) : out;
}

native.onLoad(() => {
  slots = native.resultSlots();
  bigintLane = new BigInt64Array(slots.buffer, slots.byteOffset + ROW_LANE * 8, ROW_LANE_MAX);
  numberLane = new Float64Array(slots.buffer, slots.byteOffset + ROW_LANE * 8, ROW_LANE_MAX);
  native.setRowFiller(fill, makerOf);
});

module.exports = { rowResult, loneValue };
