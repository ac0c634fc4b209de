'use strict';
// Run-time compiling in the JS layer (`new Function`): rows.cjs writes a row's object literal
// per shape, call-frame.cjs compiles a copy of a trampoline's factory per registered function.
// Under --disallow-code-generation-from-strings every caller falls back to closures that do
// the same work.

/** Whether `new Function` works here. */
const CAN_GENERATE = (() => {
  try {
    return new Function('return true')();
  } catch {
    return false;
  }
})();

const sourceOf = Function.prototype.toString;
/** Copies made so far: each copy's text ends in its number. */
let copies = 0;

/**
 * `factory(...args)`, run from a copy of `factory` compiled for this call where code
 * generation works. V8 keeps one record of the types and call targets seen for all the
 * closures made at one place in the source: closures a shared factory makes for every
 * registered function share it, and a call site there that calls each user's function is
 * too varied to inline any of them. A copy's closures have records of their own.
 *
 * `factory` must refer to nothing but its parameters and JS's globals (its text is all the
 * copy has). A copy that cannot be made or run (a tool that rewrote the text to refer to
 * names of its own) leaves the call to `factory` itself.
 */
function callCompiledApart(factory, ...args) {
  if (CAN_GENERATE) {
    let made;
    try {
      // Text compiled before may be served from V8's cache with the records of the
      // closures it made (Node 26 does): a copy's text is its own.
      made = new Function(`return (${sourceOf.call(factory)});\n// copy ${++copies}`)()(...args);
    } catch {
      made = undefined;
    }
    if (made !== undefined) return made;
  }
  return factory(...args);
}

module.exports = { CAN_GENERATE, callCompiledApart };
