'use strict';
// The trampolines SQLite's calls of user functions and aggregates go through. The native
// side (src/engine/callbacks/) leaves each INTEGER or REAL argument in the call frame, a
// region of the result slots (CALL_* in lib/protocol.cjs), and passes `undefined` in its place
// (`true` for an INTEGER read as a BigInt, from the same memory as a BigInt64Array); any
// other argument (TEXT, BLOB, NULL, past the frame's slots) comes as itself, but for a
// small BLOB, which comes as an ArrayBuffer that the trampoline wraps as a Buffer. A trampoline
// reads the frame before the user's function runs, so a nested callback's frame cannot
// clobber it, and leaves a number result in the frame as plain memory; any other result
// is returned for the native side to convert and check.
//
// An aggregate's running value stays here, in an array indexed by the group's number that
// the native side passes in the frame with the call's flags; `start` is read (or called)
// on the group's first callback, after the arguments are read.
//
// An aggregate's step and inverse calls may also come queued (src/engine/callbacks/queue.rs): the native
// side writes them to the queue in the same slots and `deliver` runs them in order, each
// through its registration's `run`, before any other callback runs; the last may be a
// value call, whose result `deliver` gives as its own.
//
// Every registration's trampolines and `deliver` come from a copy of their factory compiled
// for it (`callCompiledApart`), so that V8 records each user function's calls apart; the
// factories therefore refer to nothing but their parameters.

const native = require('../native.cjs');
const { callCompiledApart } = require('./codegen.cjs');
const {
  CALL_SHARED,
  CALL_RESULT_TYPE,
  RESULT_OTHER,
  RESULT_NUMBER,
  RESULT_STRING,
  CALL_RESULT,
  CALL_STATE,
  CALL_FLAGS,
  CALL_ARGS,
  QUEUE_LEN,
  QUEUE,
  QUEUED_HEADER: HEADER,
  QUEUED_INVERSE: INVERSE,
  QUEUED_VALUE: VALUE,
  QUEUED_KIND_SHIFT: KIND_SHIFT,
  QUEUED_ARGC_SHIFT: ARGC_SHIFT,
  ARG_INT32: INT32,
  ARG_DOUBLE: DOUBLE,
  ARG_INT64: INT64,
  ARG_TYPE_BITS: TYPE_BITS,
  GROUP_NEW: NEW,
  GROUP_FINAL: FINAL,
  GROUP_RELEASE: RELEASE,
} = require('../protocol.cjs');
/** A kind the JS side alone uses, past the queued ones: drop the group's running value. */
const DROP = Math.max(INVERSE, VALUE) + 1;
/** A queued call's word: flags | kind << KIND_SHIFT | argc << ARGC_SHIFT. */
const FLAGS_MASK = (1 << KIND_SHIFT) - 1;
const KIND_MASK = (1 << (ARGC_SHIFT - KIND_SHIFT)) - 1;
const TYPE_MASK = (1 << TYPE_BITS) - 1;

const bufferOf = Buffer.from;

/** A group whose callback threw: SQLite's final call for it (as the statement stops) runs nothing. */
const DROPPED = Object.freeze({});

let views = null;

/** The frame as doubles, 32-bit integers and BigInts, made on first use (the slots are this thread's). */
function frameViews() {
  if (views === null) {
    const f = native.resultSlots();
    views = {
      f,
      i32: new Int32Array(f.buffer, f.byteOffset, 2 * f.length),
      b: new BigInt64Array(f.buffer, f.byteOffset, f.length),
    };
  }
  return views;
}

function decoders() {
  const { f, i32, b } = frameViews();
  // Where the slots are V8's own (no shared memory), the native side reads a callback's
  // result from its return value only.
  const shared = f[CALL_SHARED] === 1;
  /** Argument `i` as the user's function sees it (a small BLOB comes as an ArrayBuffer to wrap). */
  const arg = (a, i) => {
    if (a === false) return i32[2 * (CALL_ARGS + i)];
    if (a === undefined) return f[CALL_ARGS + i];
    if (a === true) return b[CALL_ARGS + i];
    // TEXT before the BLOB test: `instanceof` costs a string more than `typeof` does.
    if (typeof a === 'string') return a;
    return a instanceof ArrayBuffer ? bufferOf(a) : a;
  };
  /**
   * The result: a number left in the frame (returned too where the frame is not shared),
   * or itself, its type said (a string is read as one, with no question of its type, and
   * its length in the frame saves the native side asking it).
   */
  const done = (r) => {
    if (typeof r === 'number') {
      f[CALL_RESULT] = r;
      f[CALL_RESULT_TYPE] = RESULT_NUMBER;
      return shared ? undefined : r;
    }
    if (typeof r === 'string') {
      f[CALL_RESULT] = r.length;
      f[CALL_RESULT_TYPE] = RESULT_STRING;
      return r;
    }
    f[CALL_RESULT_TYPE] = RESULT_OTHER;
    return r;
  };
  /** Slot `k` as the native side wrote a small integer there (the frame's ids and flags). */
  const int = shared ? (k) => i32[2 * k] : (k) => f[k];
  /** Leaves a number running value in the frame for the native side (see `publishes`). */
  const publish = (acc) => {
    if (typeof acc === 'number') {
      f[CALL_RESULT] = acc;
      f[CALL_RESULT_TYPE] = RESULT_NUMBER;
    } else {
      f[CALL_RESULT_TYPE] = RESULT_OTHER;
    }
  };
  /** A queued argument in slot `at`, of type `t` (TYPE_BITS bits). */
  const queuedArg = (at, t) => {
    if (t === INT32) return i32[2 * at];
    if (t === DOUBLE) return f[at];
    return t === INT64 ? b[at] : null;
  };
  return { f, arg, done, int, publish, queuedArg };
}

/**
 * What the delivery's and the aggregates' factories read beside the frame: they refer to
 * nothing outside their parameters (see `callCompiledApart`).
 */
const CONSTANTS = Object.freeze({
  QUEUE_LEN,
  QUEUE,
  HEADER,
  VALUE,
  INVERSE,
  DROP,
  DROPPED,
  NEW,
  FINAL,
  RELEASE,
  CALL_STATE,
  CALL_FLAGS,
  CALL_RESULT_TYPE,
  RESULT_OTHER,
  KIND_SHIFT,
  KIND_MASK,
  FLAGS_MASK,
  ARGC_SHIFT,
  TYPE_BITS,
  TYPE_MASK,
});

/**
 * An aggregate registration's `deliver`: the queue is delivered by the `deliver` of the
 * registration whose call comes first in it, so that V8 sees the calls of one delivery loop
 * go to few runners.
 */
function deliverer() {
  return callCompiledApart(makeDeliver, CONSTANTS, frameViews());
}

/**
 * Runs the queued calls in order, `runners` being the registrations' `run` functions the
 * queue's entries number; gives the result of the last call (a value call's, else
 * undefined). A throw leaves the calls after it undone. An entry is four 32-bit words
 * (the runner's index, the group's number, flags | kind << KIND_SHIFT | argc << ARGC_SHIFT, the arguments'
 * types), then its arguments, a slot each; `run(word, id, at, types)` is given the slot
 * of the first. Refers to its parameters alone (see `callCompiledApart`).
 */
function makeDeliver(constants, views) {
  const {
    QUEUE_LEN, QUEUE, HEADER, ARGC_SHIFT, KIND_SHIFT, KIND_MASK, VALUE, NEW, DROP, CALL_RESULT_TYPE, RESULT_OTHER,
  } = constants;
  const { f, i32 } = views;
  return function deliver(r0, r1, r2, r3) {
    const n = i32[2 * QUEUE_LEN];
    // A value call that gives no number leaves none from an earlier callback.
    f[CALL_RESULT_TYPE] = RESULT_OTHER;
    let p = 2 * QUEUE;
    let r;
    let k = 0;
    try {
      for (; k < n; k++) {
        const which = i32[p];
        const word = i32[p + 2];
        const run = which === 0 ? r0 : which === 1 ? r1 : which === 2 ? r2 : r3;
        r = run(word, i32[p + 1], (p >>> 1) + HEADER, i32[p + 3]);
        p += 2 * (HEADER + (word >>> ARGC_SHIFT));
      }
    } catch (error) {
      // Which call threw, for the native side. Its group keeps no value (a value call
      // dropped its own), and the groups the calls left undone would have begun never
      // existed.
      i32[2 * QUEUE_LEN] = k;
      for (let threw = true; k < n; k++, threw = false) {
        const which = i32[p];
        const word = i32[p + 2];
        const run = which === 0 ? r0 : which === 1 ? r1 : which === 2 ? r2 : r3;
        if (threw ? ((word >>> KIND_SHIFT) & KIND_MASK) !== VALUE : (word & NEW) !== 0) run(DROP << KIND_SHIFT, i32[p + 1], 0, 0);
        p += 2 * (HEADER + (word >>> ARGC_SHIFT));
      }
      throw error;
    }
    return r;
  };
}

/** The trampoline of `db.function()`'s `fn`, for `argc` arguments (-1: varargs). */
function scalarTrampoline(fn, argc) {
  const { arg, done } = decoders();
  return callCompiledApart(makeScalarTrampoline, fn, argc, arg, done);
}

/** A scalar function's trampoline; refers to its parameters alone (see `callCompiledApart`). */
function makeScalarTrampoline(fn, argc, arg, done) {
  switch (argc) {
    case 0:
      return () => done(fn());
    case 1:
      return (a) => done(fn(arg(a, 0)));
    case 2:
      return (a, b) => done(fn(arg(a, 0), arg(b, 1)));
    case 3:
      return (a, b, c) => done(fn(arg(a, 0), arg(b, 1), arg(c, 2)));
    default:
      return (...args) => {
        for (let i = 0; i < args.length; i++) args[i] = arg(args[i], i);
        return done(Reflect.apply(fn, undefined, args));
      };
  }
}

/**
 * The trampolines of `db.aggregate()`: `[step, inverse or null, value, run]`. `step` and
 * `inverse` call the user's with the group's running value first and keep what it
 * returns (undefined keeps the value); `value` returns `result(value)` (or the value),
 * dropping the group's value after its final call; `run` makes a queued call (see
 * `deliver`). A throw drops the value too: the native side then ends the group.
 */
function aggregateTrampolines(start, step, inverse, result, argc) {
  return callCompiledApart(makeAggregateTrampolines, CONSTANTS, decoders(), start, step, inverse, result, argc);
}

/** [`aggregateTrampolines`]; refers to its parameters alone (see `callCompiledApart`). */
function makeAggregateTrampolines(constants, decoded, start, step, inverse, result, argc) {
  const { arg, done, int, publish, queuedArg } = decoded;
  const {
    DROPPED, DROP, NEW, FINAL, RELEASE, INVERSE, CALL_STATE, CALL_FLAGS,
    KIND_SHIFT, KIND_MASK, FLAGS_MASK, ARGC_SHIFT, TYPE_BITS, TYPE_MASK,
  } = constants;
  const states = [];
  const first = typeof start === 'function' ? () => start() : () => start;
  // Without `result`, the native side reads a number running value from the frame after
  // each step, and gives it as the result with no call of `value`.
  const keep = result === null
    ? (id, acc) => {
        states[id] = acc;
        publish(acc);
      }
    : (id, acc) => {
        states[id] = acc;
      };
  const advance = (fn) => {
    switch (argc) {
      case 0:
        return () => {
          const id = int(CALL_STATE);
          const isNew = int(CALL_FLAGS) === NEW;
          let ok = false;
          try {
            const acc = isNew ? first() : states[id];
            const next = fn(acc);
            keep(id, next === undefined ? acc : next);
            ok = true;
          } finally {
            if (!ok) states[id] = DROPPED;
          }
        };
      case 1:
        return (a) => {
          const id = int(CALL_STATE);
          const isNew = int(CALL_FLAGS) === NEW;
          const x = arg(a, 0);
          let ok = false;
          try {
            const acc = isNew ? first() : states[id];
            const next = fn(acc, x);
            keep(id, next === undefined ? acc : next);
            ok = true;
          } finally {
            if (!ok) states[id] = DROPPED;
          }
        };
      case 2:
        return (a, b) => {
          const id = int(CALL_STATE);
          const isNew = int(CALL_FLAGS) === NEW;
          const x = arg(a, 0);
          const y = arg(b, 1);
          let ok = false;
          try {
            const acc = isNew ? first() : states[id];
            const next = fn(acc, x, y);
            keep(id, next === undefined ? acc : next);
            ok = true;
          } finally {
            if (!ok) states[id] = DROPPED;
          }
        };
      default:
        return (...args) => {
          const id = int(CALL_STATE);
          const isNew = int(CALL_FLAGS) === NEW;
          const xs = new Array(args.length + 1);
          for (let i = 0; i < args.length; i++) xs[i + 1] = arg(args[i], i);
          let ok = false;
          try {
            const acc = isNew ? first() : states[id];
            xs[0] = acc;
            const next = Reflect.apply(fn, undefined, xs);
            keep(id, next === undefined ? acc : next);
            ok = true;
          } finally {
            if (!ok) states[id] = DROPPED;
          }
        };
    }
  };
  const valueOf = (id, flags) => {
    let ok = false;
    try {
      if (flags & RELEASE) return undefined;
      let acc;
      if (flags & NEW) states[id] = acc = first();
      else acc = states[id];
      if (acc === DROPPED) {
        ok = true;
        return undefined;
      }
      const r = result === null ? acc : result(acc);
      ok = true;
      return done(r);
    } finally {
      if (flags & FINAL) states[id] = 0;
      else if (!ok) states[id] = DROPPED;
    }
  };
  const value = () => valueOf(int(CALL_STATE), int(CALL_FLAGS));
  // A queued call (see `deliver`): `word` its flags, kind and argument count, `id` its
  // group, its arguments from slot `at` on, of `types`. A step that throws leaves its
  // group to `deliver` to drop.
  const queued = (word, id, at, types) => {
    const kind = (word >>> KIND_SHIFT) & KIND_MASK;
    if (kind > INVERSE) return other(kind, word & FLAGS_MASK, id);
    const argc = word >>> ARGC_SHIFT;
    const xs = new Array(argc + 1);
    for (let i = 0; i < argc; i++) xs[i + 1] = queuedArg(at + i, (types >>> (TYPE_BITS * i)) & TYPE_MASK);
    const acc = (word & FLAGS_MASK) === NEW ? first() : states[id];
    xs[0] = acc;
    const next = Reflect.apply(kind === INVERSE ? inverse : step, undefined, xs);
    states[id] = next === undefined ? acc : next;
    return undefined;
  };
  // A value call, or DROP.
  const other = (kind, flags, id) => {
    if (kind === DROP) {
      states[id] = DROPPED;
      return undefined;
    }
    if (result === null && flags === 0) {
      // A window's running value as it is.
      const acc = states[id];
      if (acc !== DROPPED) return done(acc);
    }
    return valueOf(id, flags);
  };
  // The usual one or two arguments, and none.
  let run = queued;
  if (argc === 0) {
    run = (word, id) => {
      const kind = (word >>> KIND_SHIFT) & KIND_MASK;
      if (kind > INVERSE) return other(kind, word & FLAGS_MASK, id);
      const acc = (word & FLAGS_MASK) === NEW ? first() : states[id];
      const next = kind === INVERSE ? inverse(acc) : step(acc);
      states[id] = next === undefined ? acc : next;
      return undefined;
    };
  } else if (argc === 1) {
    run = (word, id, at, types) => {
      const kind = (word >>> KIND_SHIFT) & KIND_MASK;
      if (kind > INVERSE) return other(kind, word & FLAGS_MASK, id);
      const x = queuedArg(at, types & TYPE_MASK);
      const acc = (word & FLAGS_MASK) === NEW ? first() : states[id];
      const next = kind === INVERSE ? inverse(acc, x) : step(acc, x);
      states[id] = next === undefined ? acc : next;
      return undefined;
    };
  } else if (argc === 2) {
    run = (word, id, at, types) => {
      const kind = (word >>> KIND_SHIFT) & KIND_MASK;
      if (kind > INVERSE) return other(kind, word & FLAGS_MASK, id);
      const x = queuedArg(at, types & TYPE_MASK);
      const y = queuedArg(at + 1, (types >>> TYPE_BITS) & TYPE_MASK);
      const acc = (word & FLAGS_MASK) === NEW ? first() : states[id];
      const next = kind === INVERSE ? inverse(acc, x, y) : step(acc, x, y);
      states[id] = next === undefined ? acc : next;
      return undefined;
    };
  }
  return [advance(step), inverse === null ? null : advance(inverse), value, run];
}

module.exports = { scalarTrampoline, aggregateTrampolines, deliverer };
