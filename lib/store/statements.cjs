'use strict';
// The store's statements and transactions on one native connection. `S.<name>` is the
// statement the original kept under that name (its SQL lives in src/store/): `run`
// returns `{ changes }`, `get` the row or undefined, `all` the rows. Rows come back in the
// shape the original's parse*Row helpers gave them (stored `*_json` columns parsed).

const native = require('../native.cjs');
const { TxKind, decode, decodeOptional } = require('../protocol.cjs');

/** The named statements of connection `handle`. */
function storeStatements(handle) {
  const S = {};
  native.storeStatementNames().forEach((name, id) => {
    S[name] = Object.freeze({
      run: (...params) => ({ changes: native.storeRun(handle, id, params) }),
      get: (...params) => decodeOptional(native.storeGet(handle, id, params)),
      all: (...params) => decode(native.storeAll(handle, id, params)),
    });
  });
  return Object.freeze(S);
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

module.exports = { storeStatements, transaction, atomic };
