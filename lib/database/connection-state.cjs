'use strict';
// What a connection keeps in JS beside the native side: better-sqlite3's
// `defaultSafeIntegers` (statements prepared later take it). Keyed by the native
// connection object, so `store.db` and its store share it.

const safeIntegersByDefault = new WeakSet();

/** Whether statements prepared now on connection `n` read INTEGER values as BigInt. */
function defaultSafeIntegers(n) {
  return safeIntegersByDefault.has(n);
}

function setDefaultSafeIntegers(n, on) {
  if (on) safeIntegersByDefault.add(n);
  else safeIntegersByDefault.delete(n);
}

module.exports = { defaultSafeIntegers, setDefaultSafeIntegers };
