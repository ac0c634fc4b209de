'use strict';
// The wire between the JS layer and the native side. Its numbers (the result slots'
// places, the row modes and call flags, the rows' forms, the aggregate queue's codes) are
// defined in Rust (src/engine/js/protocol.rs) and written into the block below by
// `node tools/protocol.mjs`; lib/native.cjs refuses a binary whose `protocol()` differs,
// and __test__/protocol.test.mjs fails when they disagree. Every other lib/ file takes
// them from here.
//
// - Rows are JS values made on the native side and built into rows by database/rows.cjs.
// - A few results that are not rows (`stmt.columns()`, the store's statistics) travel
//   as JSON text that Rust writes and JS parses once.
// - `db.prepare` returns one number: the statement's id, whether it returns data, and
//   whether it is read-only (`unpackStatement`). A statement call names its connection,
//   statement and mode in one number too (`callKey`).

// BEGIN WIRE (written by tools/protocol.mjs from src/engine/js/protocol.rs)
const WIRE = Object.freeze({
  LAST_ROWID: 0,
  LAST_ROWID_BITS: 1,
  ROW_FORM: 2,
  BUSY: 3,
  CALLBACKS: 4,
  CALL_SHARED: 5,
  CALL_RESULT_TYPE: 6,
  CALL_RESULT: 7,
  CALL_STATE: 8,
  CALL_FLAGS: 9,
  CALL_ARGS: 10,
  CALL_ARGS_MAX: 16,
  QUEUE_LEN: 26,
  QUEUE: 27,
  QUEUE_SLOTS: 2048,
  ROW_LANE: 2075,
  ROW_LANE_MAX: 1024,
  SLOTS: 3099,
  FLAT: 0,
  PLUCK: 1,
  EXPAND: 2,
  RAW: 3,
  MODE_BITS: 3,
  SAFE_INTEGERS: 4,
  IN_ORDER: 8,
  KEY_MODES: 16,
  KEY_STATEMENTS: 268435456,
  KEY_CONNECTIONS: 2097152,
  CHECK_READ: 0,
  CHECK_WRITE: 1,
  CHECK_ITERATE: 2,
  TX_BEGIN: 0,
  TX_DEFERRED: 1,
  TX_IMMEDIATE: 2,
  TX_EXCLUSIVE: 3,
  STATEMENT_ID: 4,
  STATEMENT_READER: 2,
  STATEMENT_READONLY: 1,
  FORM_OBJECT: 0,
  FORM_ARRAY: 1,
  FORM_VALUE: 2,
  FORM_EXPANDED: 3,
  LANE_NONE: 0,
  LANE_BIGINTS: 1,
  LANE_NUMBERS: 2,
  LANES: 3,
  LANE_ROW: -2,
  LANE_HELD_PLACES: 65,
  RESULT_OTHER: 0,
  RESULT_NUMBER: 1,
  RESULT_STRING: 2,
  GROUP_NEW: 1,
  GROUP_FINAL: 2,
  GROUP_RELEASE: 4,
  QUEUED_HEADER: 2,
  QUEUED_STEP: 0,
  QUEUED_INVERSE: 1,
  QUEUED_VALUE: 2,
  QUEUED_KIND_SHIFT: 8,
  QUEUED_ARGC_SHIFT: 16,
  ARG_NULL: 0,
  ARG_INT32: 1,
  ARG_DOUBLE: 2,
  ARG_INT64: 3,
  ARG_TYPE_BITS: 2,
  QUEUE_RUNNERS: 4,
});
// END WIRE

/** better-sqlite3's row modes; a statement call's mode adds SAFE_INTEGERS and IN_ORDER. */
const RowMode = Object.freeze({ FLAT: WIRE.FLAT, PLUCK: WIRE.PLUCK, EXPAND: WIRE.EXPAND, RAW: WIRE.RAW });
/** `db.transaction(fn)`'s variants for `txBegin` (BEGIN is plain, deferred by default). */
const TxKind = Object.freeze({
  BEGIN: WIRE.TX_BEGIN,
  DEFERRED: WIRE.TX_DEFERRED,
  IMMEDIATE: WIRE.TX_IMMEDIATE,
  EXCLUSIVE: WIRE.TX_EXCLUSIVE,
});
/** What a statement call is about to do, for `facadeCheck`. */
const CallKind = Object.freeze({ READ: WIRE.CHECK_READ, WRITE: WIRE.CHECK_WRITE, ITERATE: WIRE.CHECK_ITERATE });

/** Parses a JSON text from the native side. */
function decode(text) {
  return JSON.parse(text);
}

/**
 * A statement call's first argument: connection `h`, statement `id` and the call's `mode`
 * in one number (src/engine/js/protocol.rs, `CallKey`). A mode flag is added to a key
 * (`key + IN_ORDER`), never or-ed: a key is wider than 32 bits.
 */
function callKey(h, id, mode) {
  return (h * WIRE.KEY_STATEMENTS + id) * WIRE.KEY_MODES + mode;
}

/** Unpacks `db.prepare`'s number. */
function unpackStatement(packed) {
  return {
    id: Math.floor(packed / WIRE.STATEMENT_ID),
    reader: (packed & WIRE.STATEMENT_READER) !== 0,
    readonly: (packed & WIRE.STATEMENT_READONLY) !== 0,
  };
}

/** The first name whose number differs between this file and a binary's `protocol()`, or null. */
function wireDifference(native) {
  for (const name of new Set([...Object.keys(WIRE), ...Object.keys(native)])) {
    if (WIRE[name] !== native[name]) return `${name}: ${WIRE[name]} here, ${native[name]} in the binary`;
  }
  return null;
}

module.exports = { ...WIRE, WIRE, RowMode, TxKind, CallKind, decode, callKey, unpackStatement, wireDifference };
