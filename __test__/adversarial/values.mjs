// The values an adversarial sequence passes around, as data (a sequence prints and reruns
// as it is): `[kind, ...]` specs that `materialize` turns into JS values in the child,
// ordinary, odd and huge ones, and the SQL the sequences run.
import { randomText } from '../differential/random.mjs';

/** A spec of a JS value to bind, return from a callback or throw. */
export function valueSpec(g, { huge = true } = {}) {
  return g.weighted([
    [4, () => ['n', g.pick([0, 1, -1, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e308, 5e-324, 7, 42])]],
    [1, () => ['n', g.pick(['-0', 'NaN', 'Infinity', '-Infinity'])]],
    [2, () => ['b', g.pick(['0', '1', '-1', '9007199254740993', '9223372036854775807', '-9223372036854775808', '9223372036854775808', '-9223372036854775809', '18446744073709551616'])]],
    [4, () => ['s', randomText(g, g.range(0, 8))]],
    [1, () => ['s', g.pick(['\uD800', 'a\uDC00', '\u0000', 'a\u0000b', '😀'])]],
    [2, () => ['buf', randomText(g, g.range(0, 6))]],
    [1, () => ['view', g.pick(['u8', 'u16', 'dv', 'ab'])]],
    [3, () => ['null']],
    [1, () => ['undefined']],
    [1, () => ['bool', g.chance(0.5)]],
    [1, () => ['odd', g.pick(['date', 'symbol', 'function', 'array', 'object', 'map', 'null-proto', 'promise'])]],
    [huge ? 1 : 0, () => g.weighted([
      [2, () => ['huge-s', g.pick([1e5, 1e6, 8e6])]],
      [2, () => ['huge-b', g.pick([1e5, 1e6, 8e6])]],
      [1, () => ['huge-s', 1e9 + 1]],
    ])()],
  ])();
}

/** A spec of a value a callback throws: Errors of several classes and values that are not. */
export function thrownSpec(g) {
  return g.weighted([
    [3, () => ['error', g.pick(['Error', 'TypeError', 'RangeError']), randomText(g, g.range(0, 6))]],
    [1, () => ['error', 'SqliteError', 'odd']],
    [2, () => valueSpec(g, { huge: false })],
  ])();
}

const VIEWS = {
  u8: () => new Uint8Array([1, 2, 3]),
  u16: () => new Uint16Array([1, 65535]),
  dv: () => new DataView(new ArrayBuffer(3)),
  ab: () => new ArrayBuffer(2),
};

const ODD = {
  date: () => new Date(0),
  symbol: () => Symbol('s'),
  function: () => function f() {},
  array: () => [1, 'two'],
  object: () => ({ a: 1 }),
  map: () => new Map([[1, 2]]),
  'null-proto': () => Object.create(null),
  promise: () => Promise.resolve(1),
};

/** The JS value of a spec (`D` for a SqliteError of that implementation). */
export function materialize(spec, D) {
  const [kind, a, b] = spec;
  switch (kind) {
    case 'n':
      return typeof a === 'string' ? Number(a) : a;
    case 'b':
      return BigInt(a);
    case 's':
      return a;
    case 'buf':
      return Buffer.from(a);
    case 'view':
      return VIEWS[a]();
    case 'null':
      return null;
    case 'undefined':
      return undefined;
    case 'bool':
      return a;
    case 'odd':
      return ODD[a]();
    case 'huge-s':
      // Past V8's string limit only as a repeat count: the error is V8's own, before any call.
      return 'x'.repeat(a);
    case 'huge-b':
      return Buffer.alloc(a, 7);
    case 'error':
      if (a === 'SqliteError') return new D.SqliteError('thrown by a callback', 'SQLITE_CALLBACK');
      return new globalThis[a](b);
    case 'list':
      return a.map((s) => materialize(s, D));
    case 'named':
      return Object.fromEntries(Object.entries(a).map(([k, s]) => [k, materialize(s, D)]));
    default:
      throw new Error(`adversarial: no value kind ${kind}`);
  }
}

/**
 * Parameters for a statement call: mostly what the statement takes (`fit`: as many
 * positional values as it has `?`, or an object of its named ones), otherwise a list that
 * may not fit: none, positional, an array, named, or mixed.
 */
export function paramsSpec(g) {
  const values = [valueSpec(g), valueSpec(g), valueSpec(g)];
  const named = { n: valueSpec(g), p: valueSpec(g) };
  if (g.chance(0.8)) return { fit: true, values, named };
  return {
    fit: false,
    list: g.weighted([
      [2, () => []],
      [3, () => values.slice(0, g.range(1, 3))],
      [1, () => [['list', values.slice(0, g.range(0, 3))]]],
      [2, () => [['named', named]]],
      [1, () => [values[0], ['named', { n: named.n }]]],
    ])(),
  };
}

/** The parameters of `spec` for a statement of `source` (see paramsSpec). */
export function paramsFor(spec, source, D) {
  if (!spec.fit) return spec.list.map((s) => materialize(s, D));
  const names = [...new Set([...source.matchAll(/[:@$](\w+)/g)].map((m) => m[1]))];
  if (names.length > 0) return [Object.fromEntries(names.map((n) => [n, materialize(spec.named[n] ?? ['null'], D)]))];
  const count = (source.match(/\?/g) ?? []).length;
  return spec.values.slice(0, count).map((s) => materialize(s, D));
}

// ------------------------------------------------------------------ SQL

const ROWS = 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)';

export const SETUP = `CREATE TABLE IF NOT EXISTS t (a INTEGER, b TEXT, c BLOB);
CREATE TABLE IF NOT EXISTS u (x PRIMARY KEY, y);
INSERT INTO t WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 6) SELECT i, 'r' || i, zeroblob(i % 3) FROM c;`;

/** Statements that read (most call the sequence's callbacks), write, fail, or move transactions. */
export const SQL = {
  read: [
    'SELECT a, b FROM t ORDER BY a',
    'SELECT a, b, c FROM t WHERE a > ? ORDER BY a',
    'SELECT ? AS p, :n AS n',
    'SELECT @n AS n, $p AS p',
    'SELECT count(*) AS n FROM t',
    `${ROWS} SELECT i FROM c`,
    "SELECT length(?) AS n, typeof(?) AS t",
    'SELECT zeroblob(?) AS z',
    "SELECT printf('%.*c', ?, 'x') AS s",
    'SELECT 9223372036854775807 AS big, -0.0 AS z, 0.0 / 0 AS nan',
    'SELECT x, y FROM u ORDER BY x',
    'PRAGMA table_info(t)',
  ],
  calls: [
    'SELECT f0(a) AS x, b FROM t ORDER BY a',
    'SELECT f1(a, b) AS x FROM t ORDER BY a LIMIT 3',
    'SELECT f0(?) AS x',
    'SELECT f2(a, ?) FROM t',
    'SELECT a0(a) AS total FROM t',
    'SELECT a % 2 AS k, a0(a) AS total FROM t GROUP BY k ORDER BY k',
    'SELECT a, a1(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS w FROM t ORDER BY a',
    'SELECT * FROM v0',
    'SELECT * FROM v1(?)',
    'SELECT x FROM vt',
    `${ROWS} SELECT i, f0(i) AS x FROM c`,
    'SELECT a, f1(a, b) AS x, f0(b) AS y FROM t WHERE a < ? ORDER BY a',
    'SELECT * FROM v0 WHERE f0(x) IS NOT NULL',
    'SELECT x FROM tv',
  ],
  write: [
    'INSERT INTO t (a, b) VALUES (?, ?)',
    'INSERT INTO t (a, b) VALUES (f0(?), ?) RETURNING a, b',
    "UPDATE t SET b = b || '.' WHERE a < ?",
    'UPDATE t SET a = a + 1 RETURNING a',
    'DELETE FROM t WHERE a = ?',
    'INSERT INTO u VALUES (?, ?)',
    'INSERT OR REPLACE INTO u VALUES (1, f0(2))',
    'INSERT INTO t SELECT a + 100, b, c FROM t WHERE a < 20',
    'DELETE FROM t WHERE a > 50',
  ],
  schema: [
    'CREATE TABLE IF NOT EXISTS w (z)',
    'DROP TABLE IF EXISTS w',
    'CREATE INDEX IF NOT EXISTS ti ON t (a)',
    'CREATE VIRTUAL TABLE IF NOT EXISTS vt USING v2(one, two)',
    'DROP TABLE IF EXISTS vt',
    'CREATE VIEW IF NOT EXISTS tv AS SELECT f0(a) AS x FROM t',
    'CREATE TRIGGER IF NOT EXISTS tr AFTER INSERT ON u BEGIN UPDATE t SET b = f0(b) WHERE a = 1; END',
    'ATTACH DATABASE \':memory:\' AS aux',
    'DETACH DATABASE aux',
  ],
  control: ['BEGIN', 'BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK', 'SAVEPOINT s', 'RELEASE s', 'ROLLBACK TO s', 'VACUUM', 'PRAGMA user_version = 7'],
  failing: ['SELECT * FROM nope', 'SELEC 1', 'SELECT 1; SELECT 2', '', '  -- nothing', 'SELECT abs(-9223372036854775808)', 'INSERT INTO u VALUES (1, 1), (1, 2)', 'SELECT f0()'],
};

/** SQL of one family, by weight. */
export function sqlOf(g, families = [[3, 'read'], [5, 'calls'], [4, 'write'], [1, 'schema'], [2, 'control'], [1, 'failing']]) {
  return g.pick(SQL[g.weighted(families)]);
}

export const PRAGMAS = ['cache_size', 'user_version', 'user_version = 3', 'table_info(t)', 'journal_mode', 'wal_checkpoint(PASSIVE)', 'integrity_check', 'foreign_keys = 1', 'nope'];
