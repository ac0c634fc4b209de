'use strict';
// Whether the JS layer may compile small functions at run time (`new Function`): not under
// --disallow-code-generation-from-strings, where every caller falls back to closures that
// do the same work.

/** Whether `new Function` works here. */
const CAN_GENERATE = (() => {
  try {
    return new Function('return true')();
  } catch {
    return false;
  }
})();

module.exports = { CAN_GENERATE };
