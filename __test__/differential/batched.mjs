// The differential kind aimed at how aggregate calls are delivered (docs/user-functions.md
// "How calls are delivered"): several aggregates and window functions in one query beside
// scalar functions, every callback recording its call in one log so that the order of
// calls across registrations is compared; GROUP BY with many groups and groups past the
// queue's bound; steps and inverses that throw at the k-th call (then the statement runs
// again); a SQLite error later in the same step; writes beside; `.get()` and an iterator
// left early (a reset mid-aggregation); callbacks running queries on another connection
// and on their own (busy); safeIntegers; TEXT and BLOB arguments among numbers.

import { describe, describeError } from './describe.mjs';
import { registerOp } from './execute.mjs';
import { registerKind } from './kinds.mjs';

const describeArgs = (args) => Array.prototype.map.call(args, (a) => describe(a)).join(',');
const num = (x) => (typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x % 1000n) : 0.5);

/** Another connection with an aggregate and a function of its own, made once per case. */
function other(state) {
  if (!state.batchOther) {
    const db = new state.Database(':memory:');
    db.aggregate('o_sum', { start: 0, step: (a, x) => { state.calls.push(`o_sum(${describe(x)})`); return a + num(x); } });
    db.function('o_f', (x) => { state.calls.push(`o_f(${describe(x)})`); return num(x) * 2; });
    state.batchOther = db;
  }
  return state.batchOther;
}

const nested = (state, x) => other(state)
  .prepare('SELECT o_sum(v) + o_f(?) AS s FROM (SELECT 1 AS v UNION ALL SELECT 2.5 UNION ALL SELECT NULL)')
  .pluck()
  .get(num(x));

// From Node 22 on, better-sqlite3 loses the statement's error when, after a callback threw,
// the `result` of another group in progress runs as SQLite ends the statement (the call
// then returns undefined). This package keeps the error (docs/differential.md), so there
// the callbacks do not throw.
const THROWS = Number(process.versions.node.split('.')[0]) < 22;

registerOp('batchSetup', (state, step) => {
  state.calls = [];
  const db = state.db;
  const log = (text) => state.calls.push(text);
  const opts = (o) => ({ ...o, ...(step.safe === null ? {} : { safeIntegers: step.safe }) });
  let thrown = 0;
  const maybeThrow = (where, x) => {
    if (THROWS && step.throwIn === where && ++thrown === step.throwAt) {
      const error = new Error(`thrown at call ${thrown} of ${where} (${describe(x)})`);
      state.thrown = { value: error };
      throw error;
    }
  };
  db.aggregate('a_num', opts({
    start: 0,
    step: (a, x) => { log(`a_num(${describe(x)})`); maybeThrow('a_num', x); return a + num(x); },
  }));
  db.aggregate('a_text', opts({
    start: () => { log('a_text.start'); return 'S'; },
    step: (a, x, y) => { log(`a_text(${describe(x)},${describe(y)})`); return a.length > 40 ? `${a.length}` : `${a}|${describe(x)}`; },
    result: (a) => { log('a_text.result'); return `R:${a}`; },
  }));
  db.aggregate('a_obj', opts({
    varargs: true,
    start: () => ({ n: 0 }),
    step: (a, ...xs) => { log(`a_obj(${describeArgs(xs)})`); maybeThrow('a_obj', xs[0]); a.n += xs.length; },
    result: (a) => a.n,
  }));
  db.aggregate('w_num', opts({
    start: 0,
    step: (a, x) => { log(`w_num+(${describe(x)})`); maybeThrow('w_num', x); return a + num(x); },
    inverse: (a, x) => { log(`w_num-(${describe(x)})`); maybeThrow('w_inv', x); return a - num(x); },
  }));
  db.aggregate('w_res', opts({
    start: () => 10,
    step: (a, x) => { log(`w_res+(${describe(x)})`); return a + 1; },
    inverse: (a, x) => { log(`w_res-(${describe(x)})`); return a - 1; },
    result: (a) => { log('w_res.result'); return `w${a}`; },
  }));
  db.aggregate('a_nest', opts({
    start: 0,
    step: (a, x) => { log(`a_nest(${describe(x)})`); return a + nested(state, x); },
  }));
  db.aggregate('a_busy', opts({
    start: 0,
    step: (a, x) => {
      try {
        return a + db.prepare('SELECT 1 AS one').get().one;
      } catch (error) {
        log(`a_busy ${error.constructor.name}: ${error.message}`);
        return a + 0.5;
      }
    },
  }));
  db.function('rec', opts({ varargs: true }), (...xs) => { log(`rec(${describeArgs(xs)})`); return xs[0]; });
  db.function('rec_nest', opts({}), (x) => { log(`rec_nest(${describe(x)})`); return nested(state, x); });
  return 'registered';
});

registerOp('calls', (state) => {
  const text = `${state.calls.length}: ${state.calls.join(' ')}`;
  state.calls = [];
  return text;
});

registerOp('batchQuery', (state, step) => {
  state.thrown = undefined;
  try {
    const stmt = state.db.prepare(step.sql);
    if (step.safe !== undefined) stmt.safeIntegers(step.safe);
    let result;
    if (step.method === 'iterate') {
      const rows = [];
      for (const row of stmt.iterate()) {
        rows.push(row);
        if (rows.length === step.breakAfter) break;
      }
      result = rows;
    } else {
      result = stmt[step.method]();
    }
    const changes = state.db.prepare('SELECT changes() AS c, last_insert_rowid() AS r, total_changes() AS t').get();
    return `${describe(result)} ${describe(changes)}`;
  } catch (error) {
    return `${describeError(error)} own=${state.thrown !== undefined && error === state.thrown.value}`;
  }
});

/** A value of column x or y for row i, as SQL: numbers of every size, NULL, and sometimes TEXT and BLOB. */
const valueExpr = (mix) => (mix === 'numbers'
  ? "CASE i % 6 WHEN 0 THEN NULL WHEN 1 THEN 2.5 * i WHEN 2 THEN 9007199254740993 + i WHEN 3 THEN -i WHEN 4 THEN i * 1000000000 ELSE i END"
  : "CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN 2.5 * i WHEN 2 THEN -9223372036854775808 WHEN 3 THEN 'a' || i WHEN 4 THEN x'00ff' WHEN 5 THEN i * 1000000000 ELSE i END");

const WINDOWS = ['ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW',
  'ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW', 'ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING', 'GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING',
  'RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING'];

const AGGREGATES = ['a_num(x)', 'a_text(x, y)', 'a_obj(x, y, g)', 'a_num(rec(x))', 'a_obj(rec(y, x))', 'a_nest(x)', 'a_busy(x)', 'sum(abs(y))'];

registerKind('batched', 3, (g) => {
  const rows = g.weighted([[4, g.range(0, 12)], [2, g.range(12, 80)], [1, g.range(250, 700)]]);
  const groups = g.weighted([[2, 1], [2, 3], [1, 50], [1, 400]]);
  const mix = g.pick(['numbers', 'numbers', 'mixed']);
  const overflowAt = g.chance(0.15) ? g.range(1, Math.max(2, rows)) : 0;
  const setup = {
    op: 'batchSetup',
    safe: g.weighted([[3, null], [1, true], [1, false]]),
    throwIn: g.weighted([[4, null], [2, 'a_num'], [1, 'a_obj'], [1, 'w_num'], [1, 'w_inv']]),
    throwAt: g.range(1, Math.max(2, rows * 2)),
  };
  const y = overflowAt ? `CASE WHEN i = ${overflowAt} THEN -9223372036854775808 ELSE i END` : valueExpr('numbers');
  const steps = [
    { op: 'exec', sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, g, x, y); CREATE TABLE out (k, v)' },
    { op: 'exec', sql: `WITH RECURSIVE c(i) AS (SELECT 1 WHERE ${rows} > 0 UNION ALL SELECT i + 1 FROM c WHERE i < ${rows}) INSERT INTO t (g, x, y) SELECT i % ${groups}, ${valueExpr(mix)}, ${y} FROM c` },
    setup,
  ];
  for (let q = g.range(1, 4); q > 0; q--) {
    const aggs = Array.from({ length: g.range(1, 3) }, () => g.pick(AGGREGATES));
    const win = `(ORDER BY id ${g.pick(WINDOWS)})`;
    const sql = g.weighted([
      [3, () => `SELECT ${aggs.join(', ')}, rec(count(*)) AS n FROM t`],
      [3, () => `SELECT g, ${aggs.join(', ')} FROM t GROUP BY g ORDER BY g`],
      [1, () => `SELECT g, rec(g), ${aggs.join(', ')} FROM t GROUP BY g HAVING rec_nest(g) > 0`],
      [3, () => `SELECT id, w_num(x) OVER ${win} AS a, rec(id) AS r, w_res(y) OVER ${win} AS b FROM t ORDER BY id`],
      [1, () => `SELECT id, w_num(x) OVER (PARTITION BY g ORDER BY id ${g.pick(WINDOWS)}) AS a, ${aggs[0]} OVER ${win} AS c FROM t`],
      [1, () => `SELECT (SELECT ${aggs[0]} FROM t AS u WHERE u.g = t.g) AS s, a_num(x) FROM t GROUP BY g`],
      [1, () => `INSERT INTO out SELECT g, ${aggs[0]} FROM t GROUP BY g`],
      [1, () => `INSERT INTO out SELECT id, w_num(x) OVER ${win} FROM t`],
    ])();
    const method = sql.startsWith('INSERT') ? 'run' : g.weighted([[4, 'all'], [2, 'get'], [2, 'iterate'], [1, 'run']]);
    const query = { op: 'batchQuery', sql, method, breakAfter: g.range(1, 4), safe: g.chance(0.2) ? g.pick([true, false]) : undefined };
    steps.push(query, { op: 'calls' });
    // The same statement again: after a throw, the aggregate starts afresh.
    if (g.chance(0.4)) steps.push(query, { op: 'calls' });
  }
  steps.push({ op: 'batchQuery', sql: 'SELECT count(*) AS n, total(v) AS v FROM out', method: 'get' }, { op: 'state' });
  return steps;
});
