// Differential kinds for the callback and BigInt API: db.function, db.aggregate (window
// functions too), db.table, safe integers, a Database from serialize(), unsafe mode and the
// verbose option. Steps stay plain data: a callback is named by a behaviour (an index into
// the tables below) and made by the op, so a case prints and reruns like any other.

import { describe, describeError } from './describe.mjs';
import { registerOp } from './execute.mjs';
import { registerKind } from './kinds.mjs';
import { jsValue, sqlValue, storedValue } from './random.mjs';

// ------------------------------------------------------------------ values and throws

/** What a callback returns: every JS type (fresh objects per call). */
const RETURNS = [
  () => 1, () => -0, () => 1.5, () => NaN, () => Infinity, () => 2 ** 53 + 2, () => 5n, () => -(2n ** 63n),
  () => 2n ** 63n, () => 2n ** 64n, () => undefined, () => null, () => 'text', () => '\uD800', () => '',
  () => Buffer.from('ab'), () => new Uint8Array([1, 2]), () => new ArrayBuffer(2), () => true, () => ({ a: 1 }),
  () => [1], () => Symbol('s'), () => new Date(0), () => () => 1,
];

/** What a callback throws: Errors of several classes and values that are not Errors. */
const THROWS = [
  () => new Error('thrown by the callback'), () => new TypeError('a type error'), () => new RangeError('a range error'),
  () => Object.assign(new Error('with a code'), { code: 'E_OWN' }), () => 'a string', () => 42, () => null,
  () => undefined, () => ({ message: 'not an Error' }), () => 7n,
];

const describeArgs = (args) => Array.prototype.map.call(args, (a) => describe(a)).join(',');

/** Runs `fn` and describes its result or its throw; `same=` says whether the throw is the callback's own. */
function observeCall(state, fn) {
  state.thrown = undefined;
  try {
    const result = fn();
    return describe(result);
  } catch (error) {
    return `${describeError(error)} own=${state.thrown !== undefined && error === state.thrown.value}`;
  }
}

function throwOwn(state, index) {
  const value = THROWS[index]();
  state.thrown = { value };
  throw value;
}

// A function of the given arity (better-sqlite3 reads `fn.length` unless varargs).
const ARITIES = [
  (h) => function f0() { return h(arguments); },
  (h) => function f1(a) { return h(arguments); },
  (h) => function f2(a, b) { return h(arguments); },
  (h) => function f3(a, b, c) { return h(arguments); },
];
/** Past 3 parameters, a function whose `length` says how many (up to 100). */
const ARITY = new Proxy(ARITIES, {
  get: (target, key) => target[key] ?? ((h) => Object.defineProperty(function fn() { return h(arguments); }, 'length', { value: Number(key) })),
});

/**
 * Another connection whose function and aggregate a callback runs while its own call is
 * in progress: a nested callback frame (the same Database class, so the same library).
 */
function nestedQuery(state, args) {
  if (!state.nested) {
    const other = new state.Database(':memory:');
    other.function('inner', { varargs: true }, (...xs) => xs.reduce((s, x) => (typeof x === 'number' ? s + x : s), 0.5));
    other.aggregate('inner_total', { start: () => 0.25, step: (t, x) => t + (typeof x === 'number' ? x : 1) });
    state.nested = other;
  }
  const numbers = Array.prototype.filter.call(args, (x) => typeof x === 'number').slice(0, 3);
  const row = state.nested
    .prepare(`SELECT inner(${numbers.map(() => '?').join(', ')}) AS a, (SELECT inner_total(x) FROM (SELECT 1 AS x UNION ALL SELECT 2.5 UNION ALL SELECT 'z')) AS b, inner('t') AS c`)
    .get(...numbers);
  return `${row.a}/${row.b}/${row.c}`;
}

/** Scalar behaviours: `(state, step, args) => value`. */
const SCALARS = {
  echo: (state, step, args) => describeArgs(args),
  first: (state, step, args) => args[0],
  sum: (state, step, args) => Array.prototype.reduce.call(args, (s, x) => s + x, 0),
  return: (state, step) => RETURNS[step.value](),
  throw: (state, step) => throwOwn(state, step.value),
  nested: (state, step, args) => `${nestedQuery(state, args)}:${describeArgs(args)}`,
  nestedNumber: (state, step, args) => Number(nestedQuery(state, args).split('/')[0]) + Array.prototype.filter.call(args, (x) => typeof x === 'number').length,
  busyGet: (state) => state.db.prepare('SELECT 1 AS x').get().x,
  busyExec: (state) => state.db.exec('SELECT 1') === state.db,
  busyPragma: (state) => state.db.pragma('user_version', { simple: true }),
  other: (state, step, args) => {
    const other = new state.Database(':memory:');
    try {
      return other.prepare('SELECT ? + 1 AS x').pluck().get(typeof args[0] === 'number' ? args[0] : 1);
    } finally {
      other.close();
    }
  },
};

const OPTION_VALUES = [undefined, true, false, 1, 0, 'yes', null];

function options(g, keys) {
  const o = {};
  for (const key of keys) if (g.chance(0.4)) o[key] = g.weighted([[8, true], [6, false], [1, g.pick(OPTION_VALUES)]]);
  return o;
}

// ------------------------------------------------------------------ ops

registerOp('function', (state, step) => {
  const h = (args) => SCALARS[step.behavior](state, step, args);
  const fn = step.fn === 'bad' ? 'not a function' : ARITY[step.arity](h);
  const args = step.options === 'none' ? [step.name, fn] : [step.name, step.options, fn];
  return describe(state.db.function(...args) === state.db);
});

/** A statement's call whose error may be a callback's own thrown value. */
registerOp('query', (state, step) => observeCall(state, () => {
  const stmt = state.db.prepare(step.sql);
  if (step.safe !== undefined) stmt.safeIntegers(step.safe);
  if (step.mode) stmt[step.mode]();
  const result = stmt[step.method](...step.params);
  return step.method === 'iterate' ? [...result] : result;
}));

/** Aggregate callbacks: they build a text of what they saw, so types reach the comparison. */
function aggregateDefinition(state, step) {
  const def = {};
  let calls = 0;
  const maybeThrow = (where) => {
    // throwAfter: the callback throws once, at that call; the statement then runs again.
    if (step.throwIn === where && (step.throwAfter === undefined || calls++ === step.throwAfter)) throwOwn(state, step.throwValue);
  };
  const wrap = (where, body) => ARITY[step.arity]((args) => {
    maybeThrow(where);
    const text = body(args);
    return step.nested ? `${text}~${nestedQuery(state, args)}` : text;
  });
  if (step.start === 'function') def.start = () => { maybeThrow('start'); return 'F'; };
  else if (step.start !== 'absent') def.start = step.start;
  if (step.step !== 'absent') def.step = step.step === 'bad' ? 42 : wrap('step', (args) => `${args[0]}+${describeArgs(Array.prototype.slice.call(args, 1))}`);
  if (step.inverse) def.inverse = wrap('inverse', (args) => `${args[0]}-${describeArgs(Array.prototype.slice.call(args, 1))}`);
  if (step.result === 'echo') def.result = (acc) => { maybeThrow('result'); return `R(${describe(acc)})`; };
  else if (typeof step.result === 'number') def.result = () => { maybeThrow('result'); return RETURNS[step.result](); };
  Object.assign(def, step.options);
  return def;
}

registerOp('aggregate', (state, step) => describe(state.db.aggregate(step.name, aggregateDefinition(state, step)) === state.db));

/** Rows of a virtual table as the generator yields them. */
const ROW_VALUES = [() => 1, () => 1.5, () => -0, () => 2n ** 62n, () => 'x', () => null, () => Buffer.from('b'),
  () => 9007199254740993n];
const BAD_ROW_VALUES = [() => undefined, () => true, () => ({}), () => 2n ** 64n, () => Symbol('s'), () => NaN];

function* tableRows(state, step, params) {
  for (const [i, row] of step.rows.entries()) {
    if (step.throwAt === i) throwOwn(state, step.throwValue);
    const values = row.values.map((v) => (v < 0 ? BAD_ROW_VALUES[-v - 1]() : ROW_VALUES[v]()));
    if (row.echo) values[0] = describeArgs(params);
    if (row.shape === 'array') yield values;
    else if (row.shape === 'object') yield Object.fromEntries(step.columns.map((c, j) => [c, values[j]]).filter((_, j) => j < values.length));
    else if (row.shape === 'extra') yield { ...Object.fromEntries(step.columns.map((c, j) => [c, values[j]])), extra: 1 };
    else yield row.shape === 'number' ? 5 : null;
  }
}

registerOp('table', (state, step) => {
  const definition = (...args) => ({
    columns: step.columns,
    ...(step.parameters ? { parameters: step.parameters } : {}),
    ...step.options,
    rows: function* rows(...params) {
      yield* tableRows(state, step, [...args, ...params]);
    },
  });
  const arg = step.factory ? (...args) => (step.factoryThrows ? throwOwn(state, 0) : definition(...args)) : definition();
  return describe(state.db.table(step.name, arg) === state.db);
});

registerOp('safe', (state, step) => {
  if (step.stmt) {
    const stmt = state.stmts.get(step.stmt);
    return describe(stmt.safeIntegers(...step.args) === stmt);
  }
  return describe(state.db.defaultSafeIntegers(...step.args) === state.db);
});

registerOp('unsafe', (state, step) => describe(state.db.unsafeMode(...step.args) === state.db));

/** Replaces the database with one opened from its serialize() bytes. */
registerOp('reopen', (state, step) => {
  const bytes = state.db.serialize();
  const was = state.db;
  const opts = step.options === 'none' ? [] : [step.options];
  state.db = new state.Database(step.copy ? Buffer.from(bytes) : bytes, ...opts);
  was.close();
  state.stmts.clear();
  return `buffer=${Buffer.isBuffer(bytes)} readonly=${state.db.readonly} memory=${state.db.memory} name=${describe(state.db.name)}`;
});

const LOGGERS = {
  log: (state) => (...args) => { state.log.push(describeArgs(args)); },
  throws: (state) => (...args) => { state.log.push(describeArgs(args)); throwOwn(state, 0); },
  notFunction: () => 'log',
};

/** Replaces the database with one opened with a `verbose` logger. */
registerOp('verbose', (state, step) => {
  state.log = [];
  const was = state.db;
  state.db = new state.Database(':memory:', { verbose: LOGGERS[step.logger](state) });
  was.close();
  state.stmts.clear();
  return 'opened';
});

registerOp('log', (state) => {
  const text = (state.log ?? []).join(' | ');
  state.log = [];
  return text;
});

// ------------------------------------------------------------------ kinds


/** A `query` step of a read or write, maybe with safeIntegers and a row mode. */
const queryStep = (g, sql, method, params, modes) => {
  const mode = g.chance(0.2) ? g.pick(modes) : undefined;
  return { op: 'query', sql, method, params, safe: g.chance(0.2) ? g.pick([true, false]) : undefined, mode };
};

const callArgs = (g, n) => Array.from({ length: n }, () => sqlValue(g));

const scalarStep = (g, name) => {
  const behavior = g.weighted([[5, 'echo'], [3, 'first'], [1, 'sum'], [4, 'return'], [3, 'throw'], [1, 'busyGet'], [1, 'busyExec'],
    [1, 'busyPragma'], [1, 'other'], [1, 'nested'], [1, 'nestedNumber']]);
  const value = behavior === 'return' ? g.int(RETURNS.length) : behavior === 'throw' ? g.int(THROWS.length) : 0;
  const opts = options(g, ['varargs', 'deterministic', 'directOnly', 'safeIntegers']);
  return {
    op: 'function', name, behavior, value, arity: g.weighted([[12, g.int(4)], [1, g.range(4, 24)]]), fn: g.chance(0.03) ? 'bad' : 'ok',
    options: g.weighted([[8, opts], [2, 'none'], [1, g.pick([null, 'x', 5])]]),
  };
};

/** db.function: options, argument counts, return values, throws, busy and other databases. */
registerKind('function', 4, (g) => {
  const fn = scalarStep(g, g.pick(['f', 'F', 'abs']));
  const steps = [fn];
  if (g.chance(0.2)) steps.push({ op: 'safe', args: g.pick([[], [true], [false]]) });
  for (let i = g.range(1, 3); i > 0; i--) {
    // Past 16 arguments some travel outside the native side's call frame.
    const n = g.weighted([[5, fn.arity], [2, g.range(0, 4)], [1, g.range(4, 24)]]);
    const args = g.chance(0.3) ? Array.from({ length: n }, () => '?') : callArgs(g, n);
    const sql = g.weighted([
      [5, () => `SELECT ${fn.name}(${args.join(', ')}) AS v`],
      [1, () => `SELECT ${fn.name}(${args.join(', ')}) AS v FROM (SELECT 1 UNION ALL SELECT 2)`],
      [1, () => `CREATE VIEW v${i} AS SELECT ${fn.name}(${args.join(', ')}) AS v`],
      [1, () => `CREATE TABLE c${i} (a CHECK (${fn.name}(${args.join(', ')}) IS NOT 0))`],
      [1, () => `SELECT * FROM v${i}`],
    ])();
    const params = args[0] === '?' ? args.map(() => jsValue(g)) : [];
    steps.push(queryStep(g, sql, sql.startsWith('SELECT') ? g.pick(['get', 'all', 'iterate', 'get']) : 'run', params, ['raw', 'pluck']));
    if (sql.startsWith('CREATE VIEW')) steps.push({ op: 'query', sql: `SELECT * FROM v${i}`, method: 'all', params: [] });
    if (sql.startsWith('CREATE TABLE')) steps.push({ op: 'query', sql: `INSERT INTO c${i} VALUES (1)`, method: 'run', params: [] });
  }
  if (g.chance(0.3)) steps.push(scalarStep(g, fn.name), { op: 'query', sql: `SELECT ${fn.name}(1) AS v`, method: 'get', params: [] });
  steps.push({ op: 'state' }, { op: 'query', sql: 'SELECT 1 AS still', method: 'get', params: [] });
  return steps;
});

const FRAMES = ['ROWS BETWEEN 1 PRECEDING AND CURRENT ROW', 'ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW',
  'ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING', 'RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING', 'ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING',
  'GROUPS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING', ''];

/** db.aggregate: start as a value or a function, step, inverse (window frames), result, throws. */
registerKind('aggregate', 3, (g) => {
  const inverse = g.chance(0.5);
  const agg = {
    op: 'aggregate', name: 'agg', arity: g.weighted([[10, g.range(1, 3)], [1, g.range(4, 20)]]),
    start: g.weighted([[3, 'function'], [3, 'absent'], [1, 0], [1, 'S'], [1, null], [1, 5n]]),
    step: g.weighted([[20, 'ok'], [1, 'absent'], [1, 'bad']]),
    inverse,
    result: g.weighted([[3, 'echo'], [2, undefined], [2, g.int(RETURNS.length)]]),
    throwIn: g.weighted([[6, null], [1, 'start'], [1, 'step'], [1, 'inverse'], [1, 'result']]),
    throwValue: g.int(THROWS.length),
    throwAfter: g.chance(0.5) ? g.int(8) : undefined,
    nested: g.chance(0.1),
    options: options(g, ['varargs', 'deterministic', 'directOnly', 'safeIntegers']),
  };
  const steps = [
    { op: 'exec', sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, x)' },
    { op: 'exec', sql: `INSERT INTO t (g, x) VALUES ${Array.from({ length: g.range(1, 6) }, () => `(${g.range(0, 2)}, ${storedValue(g)})`).join(', ')}` },
    agg,
  ];
  for (let i = g.range(1, 3); i > 0; i--) {
    const args = Array.from({ length: g.weighted([[6, agg.arity - 1], [1, g.range(0, 3)], [1, g.range(3, 20)]]) }, () => g.pick(['x', 'id', 'g', sqlValue(g)]));
    const call = `agg(${['x', ...args].join(', ')})`;
    const sql = g.weighted([
      [3, () => `SELECT ${call} AS v FROM t`],
      [2, () => `SELECT g, ${call} AS v FROM t GROUP BY g ORDER BY g`],
      [1, () => `SELECT ${call} AS v FROM t WHERE 0`],
      [4, () => `SELECT id, ${call} OVER (ORDER BY id ${g.pick(FRAMES)}) AS v FROM t ORDER BY id`],
      [1, () => `SELECT id, ${call} OVER (PARTITION BY g ORDER BY id ${g.pick(FRAMES)}) AS v FROM t ORDER BY id`],
    ])();
    const query = queryStep(g, sql, g.pick(['all', 'all', 'get', 'iterate']), [], ['raw']);
    steps.push(query);
    // The same statement again: after a throw mid-aggregate, its groups start afresh.
    if (g.chance(0.4)) steps.push(query);
  }
  steps.push({ op: 'state' }, { op: 'query', sql: 'SELECT count(*) AS n FROM t', method: 'get', params: [] });
  return steps;
});

const VT_COLUMNS = [['a'], ['a', 'b'], ['a', 'b', 'c'], ['x y', '__proto__'], []];

/** db.table: rows as arrays and objects, columns, parameters, safeIntegers, the factory form, bad rows. */
registerKind('table', 3, (g) => {
  const columns = g.weighted([[8, g.pick(VT_COLUMNS.slice(0, 4))], [1, []], [1, 'bad']]);
  const width = Array.isArray(columns) ? columns.length : 1;
  const parameters = g.weighted([[3, null], [2, ['p']], [1, ['p', 'q']]]);
  const factory = g.chance(0.3);
  const rows = Array.from({ length: g.range(0, 4) }, () => ({
    shape: g.weighted([[6, 'array'], [5, 'object'], [1, 'extra'], [1, 'number'], [1, 'null']]),
    values: Array.from({ length: g.weighted([[10, width], [1, width + 1], [1, Math.max(0, width - 1)]]) },
      () => (g.chance(0.08) ? -1 - g.int(BAD_ROW_VALUES.length) : g.int(ROW_VALUES.length))),
    echo: g.chance(0.2),
  }));
  const def = {
    op: 'table', name: 'vt', columns, parameters, factory, factoryThrows: factory && g.chance(0.1), rows,
    throwAt: g.chance(0.15) ? g.int(rows.length + 1) : -1, throwValue: g.int(THROWS.length),
    options: options(g, ['safeIntegers', 'directOnly']),
  };
  const steps = [def];
  let source = 'vt';
  if (factory) {
    const args = Array.from({ length: g.range(0, 3) }, () => g.pick(['1', "'two'", '3.5', 'x', "'a b'", 'NULL', '"q"']));
    steps.push({ op: 'query', sql: `CREATE VIRTUAL TABLE made USING vt(${args.join(', ')})`, method: 'run', params: [] });
    source = 'made';
  }
  for (let i = g.range(1, 3); i > 0; i--) {
    const p = parameters ? parameters.map(() => g.pick(['1', "'v'", '2.5', 'NULL', '9223372036854775807', '?'])) : [];
    const sql = g.weighted([
      [4, () => `SELECT * FROM ${source}${p.length ? `(${p.join(', ')})` : ''}`],
      [1, () => `SELECT ${Array.isArray(columns) && columns.length ? `"${columns[0]}"` : 'rowid'}, typeof(1) FROM ${source} ORDER BY 1`],
      [1, () => (parameters ? `SELECT * FROM ${source} WHERE p = ${p[0]}` : `SELECT count(*) AS n FROM ${source}`)],
    ])();
    const params = sql.includes('?') ? Array.from({ length: sql.split('?').length - 1 }, () => jsValue(g)) : [];
    steps.push(queryStep(g, sql, g.pick(['all', 'get', 'iterate']), params, ['raw', 'expand']));
  }
  steps.push({ op: 'state' }, { op: 'query', sql: 'SELECT 1 AS still', method: 'get', params: [] });
  return steps;
});

const BIG_INTEGERS = ['0', '1', '-1', '9007199254740991', '9007199254740993', '9223372036854775807', '-9223372036854775808', '1.5', "'7'", 'NULL'];

/** Safe integers: stmt.safeIntegers(), db.defaultSafeIntegers(), BigInt parameters, every mode, lastInsertRowid. */
registerKind('safe-integers', 3, (g) => {
  const steps = [{ op: 'exec', sql: 'CREATE TABLE b (id INTEGER PRIMARY KEY, v)' }];
  const flag = () => g.weighted([[3, []], [3, [true]], [3, [false]], [1, [g.pick([1, 0, 'yes', null, undefined])]]]);
  if (g.chance(0.5)) steps.push({ op: 'safe', args: flag() });
  steps.push({ op: 'prepare', sql: `SELECT ${Array.from({ length: g.range(1, 4) }, (_, i) => `${g.pick(BIG_INTEGERS)} AS c${i}`).join(', ')}`, as: 's' });
  steps.push({ op: 'prepare', sql: 'INSERT INTO b VALUES (?, ?)', as: 'w' });
  steps.push({ op: 'prepare', sql: 'SELECT id, v, typeof(v) AS t FROM b ORDER BY id', as: 'r' });
  for (let i = g.range(2, 6); i > 0; i--) {
    steps.push(g.weighted([
      [2, () => ({ op: 'safe', stmt: g.pick(['s', 'w', 'r']), args: flag() })],
      [1, () => ({ op: 'safe', args: flag() })],
      [1, () => ({ op: 'mode', stmt: g.pick(['s', 'r']), which: g.pick(['raw', 'pluck', 'expand']), args: [] })],
      [3, () => ({ op: 'call', stmt: 'w', method: 'run', params: [
        g.pick([null, 2n ** 62n, -(2n ** 63n), 9007199254740993n, 2n ** 63n, g.range(1, 1000)]),
        g.pick([1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n, 5, 2 ** 53 + 2, 'x']),
      ] })],
      [2, () => ({ op: 'call', stmt: g.pick(['s', 'r']), method: g.pick(['get', 'all']), params: [] })],
      [1, () => ({ op: 'forof', stmt: g.pick(['s', 'r']), params: [], breakAfter: 0, throwAfter: 0 })],
      [1, () => ({ op: 'prepare', sql: 'SELECT id, v, typeof(v) AS t FROM b ORDER BY id', as: 'r' })],
    ])());
  }
  steps.push({ op: 'call', stmt: 'r', method: 'all', params: [] });
  return steps;
});

/** new Database(buffer) from serialize(), read-only too, then reads and writes. */
registerKind('from-buffer', 1, (g) => [
  { op: 'exec', sql: `CREATE TABLE t (a, b); INSERT INTO t VALUES (${storedValue(g)}, ${storedValue(g)}), (1, 2)` },
  { op: 'reopen', copy: g.chance(0.5), options: g.weighted([[3, 'none'], [3, { readonly: true }], [2, { readonly: false }], [1, { fileMustExist: true }]]) },
  { op: 'prepare', sql: 'SELECT * FROM t', as: 's' },
  { op: 'call', stmt: 's', method: 'all', params: [] },
  { op: 'exec', sql: g.pick(['INSERT INTO t VALUES (3, 4)', 'CREATE TABLE u (x)', 'DELETE FROM t', 'SELECT 1']) },
  { op: 'call', stmt: 's', method: 'all', params: [] },
  { op: 'state' },
]);

/** unsafeMode(): writes and reads while an iterator is open, on and off. */
registerKind('unsafe', 2, (g) => {
  const steps = [
    { op: 'exec', sql: `CREATE TABLE t (a INTEGER, b); INSERT INTO t VALUES ${Array.from({ length: g.range(1, 5) }, (_, i) => `(${i}, ${storedValue(g)})`).join(', ')}` },
    { op: 'unsafe', args: g.weighted([[4, []], [3, [true]], [2, [false]], [1, [g.pick([1, 'yes', null])]]]) },
    { op: 'prepare', sql: 'SELECT * FROM t ORDER BY a', as: 's' },
    { op: 'prepare', sql: 'UPDATE t SET a = a + 10 WHERE a = 0', as: 'w' },
    { op: 'prepare', sql: 'SELECT count(*) AS n FROM t', as: 'r' },
  ];
  const during = () => g.pick([
    { op: 'call', stmt: 'w', method: 'run', params: [] },
    { op: 'call', stmt: 'r', method: 'get', params: [] },
    { op: 'exec', sql: 'INSERT INTO t VALUES (100, 1)' },
    { op: 'exec', sql: 'DELETE FROM t WHERE a = 1' },
    { op: 'unsafe', args: [false] },
    { op: 'unsafe', args: [true] },
    { op: 'tx', variant: 'default', body: [], args: [], throws: null },
  ]);
  const actions = Array.from({ length: g.range(1, 6) }, () => g.weighted([[3, 'next'], [3, during()], [1, 'return']]));
  if (g.chance(0.7)) actions.push('return');
  steps.push({ op: 'iterate', stmt: 's', params: [], actions }, { op: 'call', stmt: 's', method: 'all', params: [] }, { op: 'state' });
  return steps;
});

/** The verbose option: what it is given for each statement run, a logger that throws. */
registerKind('verbose', 1, (g) => {
  // Not drawn: prepare() of a CREATE TABLE whose table exists, which better-sqlite3 refuses
  // ("table t already exists") and this package prepares; the table is made once, first.
  const steps = [{ op: 'verbose', logger: g.weighted([[5, 'log'], [2, 'throws'], [1, 'notFunction']]) },
    { op: 'exec', sql: 'CREATE TABLE t (a)' }, { op: 'log' }];
  const statements = ['INSERT INTO t VALUES (1)', 'SELECT * FROM t', "SELECT 'x' AS y, ? AS z", 'SELECT 1; SELECT 2'];
  for (let i = g.range(1, 4); i > 0; i--) {
    const sql = g.pick(statements);
    steps.push(g.weighted([
      [2, () => ({ op: 'exec', sql })],
      [2, () => ({ op: 'query', sql, method: g.pick(['run', 'all', 'get', 'iterate']), params: sql.includes('?') ? [jsValue(g)] : [] })],
      [1, () => ({ op: 'pragma', source: 'user_version', options: { simple: true } })],
      [1, () => ({ op: 'tx', variant: 'default', body: [{ op: 'exec', sql: 'SELECT 1' }], args: [], throws: null })],
    ])(), { op: 'log' });
  }
  return steps;
});
