'use strict';
// The store's statements and transactions on one native connection. `S.<name>` is the
// statement the original kept under that name (its SQL lives in src/store/): `run`
// returns `{ changes }`, `get` the row or undefined, `all` the rows. Rows come back in the
// shape the original's parse*Row helpers gave them (stored `*_json` columns parsed).

const native = require('../native.cjs');
const { TxKind, callKey } = require('../protocol.cjs');
const { rowResult } = require('../database/rows.cjs');

/**
 * The named statements of connection `handle`, as the store of schema `version` has
 * them (a statement whose SQL changed between versions comes in that version's form).
 * A statement with `@name` parameters takes one row object, whose values go to native
 * code in the statement's parameter order (the order better-sqlite3 reads a named row
 * in); any other takes its arguments as they are.
 * Either way they are the native call's own arguments (storeRun/Get/All are variadic).
 */
function storeStatements(handle, version) {
  const S = {};
  native.storeStatements(version).forEach(({ id, name, params: keys }) => {
    const key = callKey(handle, id, 0);
    S[name] = Object.freeze(keys ? namedStatement(key, keys) : positionalStatement(key));
  });
  return Object.freeze(S);
}

function namedStatement(key, keys) {
  const run = namedCall(native.storeRun, key, keys);
  const get = namedCall(native.storeGet, key, keys);
  const all = namedCall(native.storeAll, key, keys);
  return {
    run: (row) => ({ changes: run(row) }),
    get: (row) => rowResult(get(row)),
    all,
  };
}

/**
 * `(row) => call(key, row[key1], row[key2], …)` (`key` names the connection and the
 * statement, `callKey`): the row's values read in the
 * statement's key order, written out as one function per statement so that each read is
 * a fixed property of one row shape and no array is built and spread. Where code
 * generation from strings is disallowed, the keys are mapped at each call instead.
 */
function namedCall(call, key, keys) {
  const reads = keys.map((name) => `row[${JSON.stringify(name)}]`).join(', ');
  try {
    return new Function('call', 'key', `return (row) => call(key, ${reads});`)(call, key);
  } catch {
    return (row) => call(key, ...keys.map((name) => row[name]));
  }
}

function positionalStatement(key) {
  return {
    run: (...params) => ({ changes: native.storeRun(key, ...params) }),
    get: (...params) => rowResult(native.storeGet(key, ...params)),
    all: (...params) => native.storeAll(key, ...params),
  };
}

/**
 * `fn()` in a transaction of `kind` (a savepoint inside an open one): committed when it
 * returns, rolled back when it throws. The same guard `db.transaction(fn)` uses.
 */
function transaction(n, kind, fn) {
  const h = n.handle;
  const nested = native.txBegin(h, kind);
  try {
    const result = fn();
    native.txCommit(h, nested);
    return result;
  } catch (error) {
    if (n.inTransaction) native.txRollback(h, nested);
    throw error;
  }
}

/**
 * The store's methods that read, write and read again run in one IMMEDIATE transaction
 * (README, "Deliberate differences"): one round of file locks, and no other writer in
 * between.
 */
const atomic = (n, fn) => transaction(n, TxKind.IMMEDIATE, fn);

/**
 * For an IN list the original built with `array.map(() => "?").join(",")`: true per
 * element, false per hole of a sparse array, which leaves an empty slot in the list (a
 * syntax error then, as in the original). The native side writes the placeholders.
 */
const elementFlags = (array) => Array.from(array.map(() => true), Boolean);

module.exports = { storeStatements, transaction, atomic, elementFlags };
