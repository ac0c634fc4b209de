// The kinds of differential case: each is a generator `(g) => steps` (steps: execute.mjs)
// registered with a weight. `makeCase(seed, index)` draws case `index` of a seed alone,
// so any case can be run again by its number. New call kinds (user functions,
// aggregates, BigInt modes) plug in with `registerKind` (and `registerOp` for new steps).

import { anyName, ident, jsValue, plainName, Random, randomText, sqlText, sqlValue, storedValue } from './random.mjs';

const KINDS = [];

/** Registers case kind `name`, drawn with relative `weight`. */
export function registerKind(name, weight, generate) {
  if (KINDS.some((k) => k.name === name)) throw new Error(`differential: kind ${name} registered twice`);
  KINDS.push({ name, weight, generate });
}

/** Case `index` of `seed`: `{ kind, steps }`, the same on every run and every Node. */
export function makeCase(seed, index, only = null) {
  const g = new Random(BigInt(seed) * 1000003n + BigInt(index));
  const kinds = only ? KINDS.filter((k) => only.includes(k.name)) : KINDS;
  if (kinds.length === 0) throw new Error(`differential: no kind among ${only}`);
  const kind = g.weighted(kinds.map((k) => [k.weight, k]));
  return { kind: kind.name, steps: kind.generate(g) };
}

export const kindNames = () => KINDS.map((k) => k.name);

// ------------------------------------------------------------------ shared pieces

const MODES = ['raw', 'pluck', 'expand'];

/** Row-mode toggles and reads of prepared statement `as`, in any order. */
function readSteps(g, as) {
  const steps = [];
  const n = g.range(1, 4);
  for (let i = 0; i < n; i++) {
    if (g.chance(0.5)) {
      const args = g.weighted([[4, []], [3, [true]], [2, [false]], [1, [g.pick(['yes', 1, null, undefined])]]]);
      steps.push({ op: 'mode', stmt: as, which: g.pick(MODES), args });
    }
    steps.push(g.weighted([
      [4, { op: 'call', stmt: as, method: 'get', params: [] }],
      [4, { op: 'call', stmt: as, method: 'all', params: [] }],
      [2, { op: 'forof', stmt: as, params: [], breakAfter: g.chance(0.3) ? g.range(1, 3) : 0, throwAfter: 0 }],
      [1, { op: 'iterate', stmt: as, params: [], actions: ['next', 'next', 'next', 'return', 'next'] }],
      [1, { op: 'call', stmt: as, method: 'columns', params: [] }],
      [1, { op: 'call', stmt: as, method: 'run', params: [] }],
    ]));
  }
  return steps;
}

/** Names for one row: some repeated (a small pool), some without an alias. */
function columnList(g, count) {
  const pool = Array.from({ length: g.range(1, 3) }, () => anyName(g));
  const columns = [];
  for (let i = 0; i < count; i++) {
    const expr = sqlValue(g);
    columns.push(g.chance(0.15) ? expr : `${expr} AS ${ident(anyName(g, pool))}`);
  }
  return columns;
}

const TYPES = ['INTEGER', 'REAL', 'TEXT', 'BLOB', 'NUMERIC', '', 'ANY', 'VARCHAR(10)', 'weird type', 'INT PRIMARY KEY'];

/** CREATE TABLE and INSERTs of a table with odd names: `{ table, columns, steps }`. */
function table(g, taken = []) {
  let name = anyName(g);
  while (taken.includes(name) || name.toLowerCase().startsWith('sqlite_')) name = `${name}_${g.int(100)}`;
  const columns = [];
  const n = g.range(1, 5);
  while (columns.length < n) {
    const c = anyName(g);
    if (!columns.some((x) => x.toLowerCase() === c.toLowerCase())) columns.push(c);
  }
  const typed = columns.map((c, i) => `${ident(c)} ${i === 0 ? g.pick(TYPES) : g.pick(TYPES.slice(0, -1))}`);
  const steps = [{ op: 'exec', sql: `CREATE TABLE ${ident(name)} (${typed.join(', ')})` }];
  const rows = g.range(0, 4);
  for (let r = 0; r < rows; r++) {
    steps.push({ op: 'exec', sql: `INSERT INTO ${ident(name)} VALUES (${columns.map(() => storedValue(g)).join(', ')})` });
  }
  return { table: name, columns, steps };
}

// ------------------------------------------------------------------ kinds

/** SELECT of expressions (one row, or several through UNION ALL) in every row mode. */
registerKind('select-expr', 5, (g) => {
  const count = g.weighted([[3, 1], [4, g.range(2, 6)], [1, g.range(7, 40)]]);
  const columns = columnList(g, count);
  let sql = `SELECT ${columns.join(', ')}`;
  if (g.chance(0.25)) {
    for (let r = g.range(1, 3); r > 0; r--) sql += ` UNION ALL SELECT ${columns.map(() => sqlValue(g)).join(', ')}`;
  }
  return [{ op: 'prepare', sql, as: 's' }, ...readSteps(g, 's')];
});

/** Tables with odd names and types; SELECTs of their columns, joins, subqueries and views. */
registerKind('select-table', 4, (g) => {
  const a = table(g);
  const b = table(g, [a.table]);
  const steps = [...a.steps, ...b.steps];
  const col = (t) => `${ident(t.table)}.${ident(g.pick(t.columns))}`;
  const shapes = [
    () => `SELECT * FROM ${ident(a.table)}`,
    () => `SELECT *, ${sqlValue(g)} FROM ${ident(a.table)}`,
    () => `SELECT ${col(a)}, ${col(b)}, ${sqlValue(g)} AS ${ident(anyName(g))}, ${col(a)} AS ${ident(anyName(g))} FROM ${ident(a.table)}, ${ident(b.table)}`,
    () => `SELECT * FROM ${ident(a.table)} CROSS JOIN ${ident(b.table)}`,
    () => `SELECT x.* FROM (SELECT ${col(a)}, 1 + 1 FROM ${ident(a.table)}) AS x`,
    () => `SELECT ${ident(a.columns[0])} AS ${ident(anyName(g))}, count(*) FROM ${ident(a.table)} GROUP BY 1`,
  ];
  if (g.chance(0.3)) {
    steps.push({ op: 'exec', sql: `CREATE VIEW ${ident(`v_${plainName(g)}`)} AS SELECT * FROM ${ident(a.table)}` });
    shapes.push(() => `SELECT * FROM sqlite_master`);
  }
  steps.push({ op: 'prepare', sql: g.pick(shapes)(), as: 's' }, ...readSteps(g, 's'));
  return steps;
});

const PARAM_STYLES = [
  (i) => '?',
  (i) => `?${i + 1}`,
  (i) => `:p${i}`,
  (i) => `@p${i}`,
  (i) => `$p${i}`,
];

/** Parameters of every style bound from JS values of every type (and refused ones). */
registerKind('bind', 3, (g) => {
  const n = g.range(0, 4);
  const style = g.pick(PARAM_STYLES);
  const mixed = g.chance(0.2);
  const marks = Array.from({ length: n }, (_, i) => (mixed ? g.pick(PARAM_STYLES) : style)(i));
  const sql = n === 0 ? 'SELECT 1 AS one' : `SELECT ${marks.map((m, i) => `${m} AS v${i}, typeof(${m}) AS t${i}`).join(', ')}`;
  const value = () => jsValue(g);
  const params = g.weighted([
    [4, () => Array.from({ length: n + (g.chance(0.2) ? g.range(-1, 1) : 0) }, value)],
    [2, () => [Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, value()]))]],
    [1, () => [Array.from({ length: n }, value)]],
    [1, () => [value(), { p0: value(), p1: value() }]],
    [1, () => [value()]],
  ])();
  const method = g.pick(['get', 'all', 'run', 'get']);
  const steps = [{ op: 'prepare', sql, as: 's' }, { op: 'call', stmt: 's', method, params }];
  if (g.chance(0.3)) steps.push({ op: 'mode', stmt: 's', which: 'raw', args: [] }, { op: 'call', stmt: 's', method: 'get', params });
  if (g.chance(0.2)) steps.push({ op: 'call', stmt: 's', method: 'bind', params }, { op: 'call', stmt: 's', method: 'get', params: g.chance(0.5) ? [] : params });
  return steps;
});

/** Steps that touch the connection while an iterator holds it. */
function duringIteration(g) {
  return g.pick([
    { op: 'exec', sql: 'INSERT INTO t VALUES (99, 99)' },
    { op: 'exec', sql: 'SELECT 1' },
    { op: 'call', stmt: 'w', method: 'run', params: [] },
    { op: 'call', stmt: 'r', method: 'get', params: [] },
    { op: 'call', stmt: 'r', method: 'all', params: [] },
    { op: 'call', stmt: 's', method: 'get', params: [] },
    { op: 'call', stmt: 's', method: 'all', params: [] },
    { op: 'mode', stmt: 's', which: 'raw', args: [] },
    { op: 'call', stmt: 's', method: 'bind', params: [] },
    { op: 'iterate', stmt: 's', params: [], actions: ['next'] },
    { op: 'pragma', source: 'user_version', options: { simple: true } },
    { op: 'pragma', source: 'user_version = 3', options: undefined },
    { op: 'prepare', sql: 'SELECT 2 AS two', as: 'x' },
    { op: 'tx', variant: 'default', body: [], args: [], throws: null },
    { op: 'state' },
  ]);
}

/** Iterators run to the end, left early (return/break/throw) and used while busy. */
registerKind('iterate', 2, (g) => {
  const steps = [
    { op: 'exec', sql: 'CREATE TABLE t (a INTEGER, b)' },
    { op: 'exec', sql: `INSERT INTO t VALUES ${Array.from({ length: g.range(1, 6) }, (_, i) => `(${i}, ${storedValue(g)})`).join(', ')}` },
    { op: 'prepare', sql: g.pick(['SELECT * FROM t', 'SELECT a AS "__proto__", b AS "0" FROM t', 'SELECT b, a, b FROM t']), as: 's' },
    { op: 'prepare', sql: 'SELECT count(*) AS n FROM t', as: 'r' },
    { op: 'prepare', sql: 'UPDATE t SET a = a + 1', as: 'w' },
  ];
  if (g.chance(0.3)) steps.push({ op: 'mode', stmt: 's', which: g.pick(['raw', 'pluck', 'expand']), args: [] });
  if (g.chance(0.5)) {
    const actions = Array.from({ length: g.range(1, 6) }, () => g.weighted([[4, 'next'], [1, 'return'], [1, 'busy'], [2, duringIteration(g)]]));
    steps.push({ op: 'iterate', stmt: 's', params: g.chance(0.1) ? [1] : [], actions });
  } else {
    steps.push({ op: 'forof', stmt: 's', params: [], breakAfter: g.range(0, 3), throwAfter: g.range(0, 3), during: g.chance(0.6) ? duringIteration(g) : null });
  }
  steps.push({ op: 'call', stmt: 'r', method: 'get', params: [] }, { op: 'call', stmt: 'w', method: 'run', params: [] }, { op: 'state' });
  return steps;
});

/** Transactions: nested ones (savepoints), failing ones (JS and SQLite errors), variants. */
registerKind('tx', 2, (g) => {
  const body = (depth) => {
    const inner = [];
    for (let i = g.range(0, 3); i > 0; i--) {
      inner.push(g.weighted([
        [3, () => ({ op: 'exec', sql: `INSERT INTO t VALUES (${g.range(0, 9)}, ${storedValue(g)})` })],
        [1, () => ({ op: 'exec', sql: g.pick(['BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT x', 'RELEASE x', 'INSERT INTO nope VALUES (1)']) })],
        [2, () => ({ op: 'state' })],
        [1, () => ({ op: 'call', stmt: 'c', method: 'get', params: [] })],
        [depth < 3 ? 2 : 0, () => tx(depth + 1)],
      ])());
    }
    return inner;
  };
  const tx = (depth) => ({
    op: 'tx',
    variant: g.pick(['default', 'deferred', 'immediate', 'exclusive']),
    body: body(depth),
    args: Array.from({ length: g.range(0, 2) }, () => g.int(10)),
    throws: g.weighted([[3, null], [1, 'js'], [1, 'sqlite']]),
  });
  return [
    { op: 'exec', sql: 'CREATE TABLE t (a INTEGER, b)' },
    { op: 'prepare', sql: 'SELECT count(*) AS n, total(a) AS s FROM t', as: 'c' },
    tx(0),
    { op: 'call', stmt: 'c', method: 'get', params: [] },
    g.chance(0.3) ? tx(0) : { op: 'state' },
    { op: 'call', stmt: 'c', method: 'get', params: [] },
  ];
});

const BAD_SQL = ['', ' ', ';', '-- only a comment', '/* c */', 'SELEC 1', 'SELECT 1; SELECT 2', 'SELECT 1;', 'SELECT 1; -- c',
  'SELECT * FROM nowhere', 'SELECT (', "SELECT 'unterminated", 'CREATE TABLE', 'SELECT 1 AS "x', 'SELECT ?999999',
  'SELECT ?0', 'SELECT :a, :a, ?', 'PRAGMA nope', 'VACUUM', 'SELECT char(0)\u0000x', 'SELECT 1 AS "\uD800"'];

/** prepare() and exec() of text that is not one good statement, and of non-strings. */
registerKind('prepare-error', 1, (g) => {
  const sql = g.weighted([[6, () => g.pick(BAD_SQL)], [1, () => `SELECT ${sqlText(randomText(g, 5))} ${g.pick(['', ';', '; SELECT 2', ' garbage'])}`], [1, () => g.pick([undefined, null, 42, {}, Buffer.from('SELECT 1')])]])();
  const steps = [{ op: 'prepare', sql, as: 's' }, { op: 'exec', sql }];
  if (typeof sql === 'string') steps.push({ op: 'exec', sql: `CREATE TABLE IF NOT EXISTS t(a); ${sql}; INSERT INTO t VALUES (1)` }, { op: 'pragma', source: 'table_info(t)', options: {} });
  return steps;
});

/** Writes: run()'s changes and lastInsertRowid (rowid edges, triggers, upserts) and RETURNING. */
registerKind('write', 2, (g) => {
  const steps = [
    { op: 'exec', sql: `CREATE TABLE w (id INTEGER PRIMARY KEY, v ${g.pick(['', 'TEXT', 'INTEGER UNIQUE', 'REAL'])})` },
  ];
  if (g.chance(0.3)) steps.push({ op: 'exec', sql: 'CREATE TABLE log (n); CREATE TRIGGER tw AFTER INSERT ON w BEGIN INSERT INTO log VALUES (new.id); END' });
  // Past rowid 2^63 - 1 SQLite picks new rowids at random: the largest here leaves room.
  const rowid = () => g.pick(['NULL', '1', '-1', '9007199254740993', '9223372036854775000', '-9223372036854775808', String(g.range(2, 99))]);
  const statements = [
    () => `INSERT INTO w VALUES (${rowid()}, ${storedValue(g)})`,
    () => `INSERT OR REPLACE INTO w VALUES (${rowid()}, ${storedValue(g)})`,
    () => `INSERT INTO w (v) VALUES (${storedValue(g)}) ON CONFLICT DO NOTHING`,
    () => `INSERT INTO w VALUES (${rowid()}, ${storedValue(g)}) RETURNING *`,
    () => `INSERT INTO w (v) VALUES (${storedValue(g)}), (${storedValue(g)}) RETURNING id AS ${ident(anyName(g))}, v`,
    () => `UPDATE w SET v = ${storedValue(g)} WHERE id ${g.pick(['>', '<', '='])} ${g.range(0, 5)}${g.chance(0.5) ? ' RETURNING v, id' : ''}`,
    () => `DELETE FROM w WHERE id = ${rowid()}${g.chance(0.5) ? ' RETURNING *' : ''}`,
    () => 'INSERT INTO w (v) VALUES (?)',
    () => 'UPDATE w SET v = v',
  ];
  for (let i = g.range(1, 6); i > 0; i--) {
    const as = `s${i}`;
    steps.push({ op: 'prepare', sql: g.pick(statements)(), as });
    steps.push({ op: 'call', stmt: as, method: g.pick(['run', 'run', 'get', 'all']), params: g.chance(0.2) ? [jsValue(g)] : [] });
  }
  steps.push({ op: 'prepare', sql: 'SELECT * FROM w ORDER BY id', as: 'all' }, { op: 'call', stmt: 'all', method: 'all', params: [] });
  return steps;
});

// Not compile_options: the two SQLite builds differ in one default (PCACHE_INITSZ).
const PRAGMAS = ['table_info(t)', 'table_xinfo(t)', 'index_list(t)', 'index_info(i)', 'foreign_key_list(t)', 'user_version',
  'user_version = 7', 'journal_mode', 'page_size', 'encoding', 'schema_version', 'collation_list', 'database_list',
  'function_list', 'integrity_check', 'quick_check(t)', 'foreign_keys', 'foreign_keys = 1', 'cache_size = -100',
  'data_version', 'table_list', 'nope', 'table_info(nope)', 'optimize'];

/** pragma() with and without `simple`, on a table with an index and a foreign key. */
registerKind('pragma', 1, (g) => [
  { op: 'exec', sql: 'CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE t (a INTEGER NOT NULL DEFAULT 3, "b c" TEXT REFERENCES p(id), "" BLOB); CREATE INDEX i ON t (a, "b c")' },
  ...Array.from({ length: g.range(1, 3) }, () => ({
    op: 'pragma',
    source: g.pick(PRAGMAS),
    options: g.weighted([[3, undefined], [2, { simple: true }], [1, { simple: false }], [1, { simple: 'yes' }], [1, null], [1, 'x']]),
  })),
]);
