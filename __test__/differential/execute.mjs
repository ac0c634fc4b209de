// Runs a differential case (a list of steps, kinds.mjs) on one Database class and returns
// what each step observed, as canonical text (describe.mjs). Steps are plain objects
// `{ op, ... }`; each op is a handler registered here, so new call kinds (user functions,
// aggregates, BigInt modes) plug in with `registerOp` beside their generator.

import { describe, describeError, observe } from './describe.mjs';

const OPS = new Map();

/**
 * Registers step handler `op`: `handler(state, step)` returns the canonical text of what
 * the step observed (throwing is fine: the error is what is observed). `state` holds
 * `db`, `Database`, `stmts` (by name) and `run(step)` to run a nested step.
 */
export function registerOp(op, handler) {
  if (OPS.has(op)) throw new Error(`differential: op ${op} registered twice`);
  OPS.set(op, handler);
}

/** Runs `steps` on a fresh in-memory database of `Database`; returns one text per step. */
export function execute(Database, steps) {
  const seen = [];
  const state = {
    Database,
    db: null,
    stmts: new Map(),
    run(step) {
      const handler = OPS.get(step.op);
      if (!handler) throw new Error(`differential: no op ${step.op}`);
      const text = observe(() => handler(state, step), (x) => x);
      seen.push(`${step.op}: ${text}`);
      return text;
    },
  };
  try {
    state.db = new Database(':memory:');
    for (const step of steps) state.run(step);
  } finally {
    // The connection a nested callback used (callbacks.mjs nestedQuery).
    if (state.nested?.open) state.nested.close();
    if (state.db?.open) {
      try {
        state.db.close();
      } catch {
        // An iterator left open by a case keeps the connection busy; it goes with the process.
      }
    }
  }
  return seen;
}

const statement = (state, step) => {
  const stmt = state.stmts.get(step.stmt);
  if (!stmt) throw new Error(`differential: no statement ${step.stmt}`);
  return stmt;
};

registerOp('exec', (state, step) => describe(state.db.exec(step.sql) === state.db));

registerOp('prepare', (state, step) => {
  const stmt = state.db.prepare(step.sql);
  state.stmts.set(step.as, stmt);
  return `reader=${stmt.reader} readonly=${stmt.readonly} source=${stmt.source === step.sql} busy=${stmt.busy}`;
});

registerOp('mode', (state, step) => {
  const stmt = statement(state, step);
  return describe(stmt[step.which](...step.args) === stmt);
});

registerOp('call', (state, step) => {
  const stmt = statement(state, step);
  const result = stmt[step.method](...step.params);
  return result === stmt ? 'the statement' : describe(result);
});

/** `stmt.iterate(...)` driven by hand: `next`, `return`, `busy` or a nested step while open. */
registerOp('iterate', (state, step) => {
  const stmt = statement(state, step);
  const iterator = stmt.iterate(...step.params);
  const parts = [];
  for (const action of step.actions) {
    if (action === 'next') parts.push(observe(() => iterator.next()));
    else if (action === 'return') parts.push(observe(() => iterator.return()));
    else if (action === 'busy') parts.push(`busy=${stmt.busy}`);
    else parts.push(`{${state.run(action)}}`);
  }
  return parts.join(' ; ');
});

/** `for (const row of stmt.iterate(...))`, leaving by `break` or a throw after some rows. */
registerOp('forof', (state, step) => {
  const stmt = statement(state, step);
  const rows = [];
  let error = null;
  try {
    for (const row of stmt.iterate(...step.params)) {
      rows.push(describe(row));
      if (step.during && rows.length === 1) rows.push(`{${state.run(step.during)}}`);
      if (rows.length === step.breakAfter) break;
      if (rows.length === step.throwAfter) throw new Error('thrown in the loop');
    }
  } catch (e) {
    error = describeError(e);
  }
  return `${rows.join(' ; ')} | ${error ?? 'done'} | busy=${stmt.busy}`;
});

/** A transaction function whose body runs nested steps, then returns or throws. */
registerOp('tx', (state, step) => {
  const fn = state.db.transaction(function body(...args) {
    const inner = step.body.map((s) => state.run(s));
    if (step.throws === 'js') throw new RangeError('thrown in the transaction');
    if (step.throws === 'sqlite') state.db.prepare('SELECT * FROM no_such_table_here').get();
    return { args: args.length, inner: inner.length, inTransaction: state.db.inTransaction };
  });
  const call = step.variant === 'default' ? fn : fn[step.variant];
  return `${observe(() => call(...step.args))} inTransaction=${state.db.inTransaction}`;
});

registerOp('pragma', (state, step) => describe(state.db.pragma(step.source, step.options)));

registerOp('state', (state) => `open=${state.db.open} inTransaction=${state.db.inTransaction} memory=${state.db.memory} readonly=${state.db.readonly}`);
