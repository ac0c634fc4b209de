'use strict';
// Values into SQLite, the JS half. better-sqlite3 binds a lone named-parameter object by
// looking each named parameter up on it in the statement's parameter order; looking keys
// up through Node-API costs far more than in JS, so here such an object's values are
// read in JS, by one function made per parameter list, checked as better-sqlite3 checks
// each value while it reads it, and handed to the native call in order (IN_ORDER). The
// native side first makes better-sqlite3's checks for the call (`facadeCheck`), so that
// a getter on the object runs only where better-sqlite3 would run it. Every other form of
// arguments (positional values, arrays, several objects, a proxy, an object of another
// realm, a statement with unnamed parameters) goes to the native side as it was passed
// (src/engine/bind/).

const { constants: bufferConstants } = require('node:buffer');
const { types } = require('node:util');
const native = require('../native.cjs');
/** A call's mode bit: its parameters are one value per parameter, in order. */
const { IN_ORDER } = require('../protocol.cjs');

const CANNOT_BIND = 'SQLite3 can only bind numbers, strings, bigints, buffers, and null';
const TOO_BIG = 'The bound string, buffer, or bigint is too big';
/**
 * The connections' length limit in bytes: the longest JS string or Buffer (lib/native.cjs
 * sets it, as better-sqlite3 does); a longer bound string or BLOB is too big.
 */
const MAX_LENGTH = Math.min(bufferConstants.MAX_STRING_LENGTH, bufferConstants.MAX_LENGTH, 2 ** 31 - 1);
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

const { getPrototypeOf, hasOwn } = Object;
const ObjectPrototype = Object.prototype;
const { isProxy } = types;

/**
 * Whether `arg` is an object better-sqlite3 reads named parameters from, as this realm
 * sees it: a non-proxy object that is neither an array nor a buffer, with Object.prototype
 * or null as its prototype (anything else goes to the native side, which decides exactly).
 */
function isPlainObject(arg) {
  if (typeof arg !== 'object' || arg === null || isProxy(arg) || Array.isArray(arg) || ArrayBuffer.isView(arg)) return false;
  const proto = getPrototypeOf(arg);
  return proto === ObjectPrototype || proto === null;
}

/** better-sqlite3's `BindValueFromJS` check of one value: the value, or its error. */
function checked(value) {
  switch (typeof value) {
    case 'number':
    case 'undefined':
      return value;
    case 'string':
      // At most three bytes per UTF-16 unit: only a very long string can be too big.
      if (value.length > MAX_LENGTH / 3 && Buffer.byteLength(value, 'utf8') > MAX_LENGTH) throw new RangeError(TOO_BIG);
      return value;
    case 'bigint':
      if (value < MIN_INT64 || value > MAX_INT64) throw new RangeError(TOO_BIG);
      return value;
    case 'object':
      if (value === null) return value;
      if (ArrayBuffer.isView(value)) {
        if (value.byteLength > MAX_LENGTH) throw new RangeError(TOO_BIG);
        return value;
      }
      break;
    default:
      break;
  }
  throw new TypeError(CANNOT_BIND);
}

function missing(key) {
  return new RangeError(`Missing named parameter "${key}"`);
}

/**
 * A function `(call, key, object) => call(key + IN_ORDER, ...values)` (`key` a call key,
 * lib/protocol.cjs `callKey`) for
 * statements whose parameters are named `keys`: each key must be an own property of the
 * object, read and checked before the next is looked up (better-sqlite3's `BindObject`).
 */
function compileBinder(keys) {
  const reads = keys
    .map((key, i) => `if (!hasOwn(o, ${JSON.stringify(key)})) throw missing(${JSON.stringify(key)});\n  const v${i} = checked(o[${JSON.stringify(key)}]);`)
    .join('\n  ');
  const values = keys.map((_, i) => `, v${i}`).join('');
  try {
    return new Function('hasOwn', 'missing', 'checked', 'IN_ORDER',
      `return function bindNamed(call, key, o) {\n  ${reads}\n  return call(key + IN_ORDER${values});\n};`)(
      hasOwn, missing, checked, IN_ORDER);
  } catch {
    // No code generation from strings: the same reads in a loop.
    return (call, key, o) => {
      const values = new Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        if (!hasOwn(o, keys[i])) throw missing(keys[i]);
        values[i] = checked(o[keys[i]]);
      }
      return call(key + IN_ORDER, ...values);
    };
  }
}

/** Binders by their parameter list (statements of the same list share one). */
const binders = new Map();
/** A statement whose parameters are not all named. */
const UNNAMED = null;

/**
 * The binder of statement `id` on connection `h` (asked of the native side once per
 * statement entry `entry`, which keeps it), or null when a parameter has no name.
 */
function binderOf(entry, h, id) {
  if (entry.binder !== undefined) return entry.binder;
  const keys = native.facadeParameterKeys(h, id);
  if (keys === null) return (entry.binder = UNNAMED);
  const joined = keys.join('\0');
  let binder = binders.get(joined);
  if (binder === undefined) binders.set(joined, (binder = compileBinder(keys)));
  return (entry.binder = binder);
}

/**
 * The binder to read the call's one argument `arg` with, after better-sqlite3's checks
 * for a call of `kind`; null when the arguments go to the native side as they are.
 */
function namedBinder(entry, h, id, kind, arg) {
  if (!isPlainObject(arg)) return null;
  const binder = binderOf(entry, h, id);
  if (binder !== null) native.facadeCheck(h, id, kind);
  return binder;
}

module.exports = { namedBinder };
