// The seeded pieces the differential cases are made of: a small PRNG, column and table
// names that JS objects treat specially, SQL expressions of every SQLite type and value
// edge, and JS values to bind. The same seed gives the same pieces on every Node.

/** A seeded generator (sfc32 over a splitmix-expanded seed). */
export class Random {
  constructor(seed) {
    let s = BigInt.asUintN(64, BigInt(seed) + 0x9e3779b97f4a7c15n);
    const next32 = () => {
      s = BigInt.asUintN(64, s + 0x9e3779b97f4a7c15n);
      let z = s;
      z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
      z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
      return Number(BigInt.asUintN(32, z ^ (z >> 31n)));
    };
    this.a = next32();
    this.b = next32();
    this.c = next32();
    this.d = next32();
  }

  /** A uint32. */
  u32() {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, n). */
  int(n) {
    return this.u32() % n;
  }

  /** An integer in [lo, hi]. */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }

  chance(p) {
    return this.u32() / 2 ** 32 < p;
  }

  pick(items) {
    return items[this.int(items.length)];
  }

  /** One of `[weight, value]` pairs, by weight. */
  weighted(pairs) {
    let total = 0;
    for (const [w] of pairs) total += w;
    let at = this.int(total);
    for (const [w, v] of pairs) {
      if (at < w) return v;
      at -= w;
    }
    return pairs[pairs.length - 1][1];
  }

  /** A double in [0, 1). */
  unit() {
    return this.u32() / 2 ** 32;
  }
}

// ------------------------------------------------------------------ names

/** Column and table names that JS objects, arrays or V8 treat specially. */
export const SPECIAL_NAMES = [
  '', ' ', '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'length', 'name',
  '__defineGetter__', '__lookupSetter__', '0', '1', '2', '-1', '-0', '01', '1.5', '1e3', 'NaN', 'Infinity',
  '4294967294', '4294967295', '4294967296', '9007199254740993', '$', '$$', 'a.b', 'a b', '"', "'", '\\', 'é', 'ñame',
  '日本語', 'Ω', '😀', 'a😀b', '\uD800', '\uDC00x', 'x\uDBFF', '\u0001', '\t', 'tëst', 'undefined', 'null', 'true',
];

const PLAIN = 'abcdefghijklmnopqrstuvwxyz_';
const ALPHABET = 'abcXYZ019 _-.$"\'\\/é日😀\u00a0\u2028';

export function plainName(g) {
  let s = '';
  const n = g.range(1, 6);
  for (let i = 0; i < n; i++) s += g.pick(PLAIN);
  return s;
}

/** A column or table name: mostly special, some plain, some long, some random text. */
export function anyName(g, pool = null) {
  if (pool && g.chance(0.3)) return g.pick(pool);
  return g.weighted([
    [6, () => g.pick(SPECIAL_NAMES)],
    [4, () => plainName(g)],
    [1, () => 'c'.repeat(g.range(100, 5000))],
    [1, () => randomText(g, g.range(1, 12))],
    [1, () => String(g.range(0, 20))],
  ])();
}

/** A SQL identifier literal for a name. */
export const ident = (name) => `"${name.replaceAll('"', '""')}"`;

// ------------------------------------------------------------------ texts and SQL values

export function randomText(g, n) {
  let s = '';
  for (let i = 0; i < n; i++) s += g.pick(ALPHABET);
  return s;
}

/** A SQL string literal of a JS text. */
export const sqlText = (text) => `'${text.replaceAll("'", "''")}'`;

const INTEGERS = ['0', '1', '-1', '2147483647', '-2147483648', '4294967296', '9007199254740991', '9007199254740992',
  '9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808', '123456789012345678'];
const REALS = ['0.5', '-0.0', '0.0', '1.5e300', '1e308', '1.7976931348623157e308', '5e-324', '1e-320', '0.1', '-2.5',
  '3.141592653589793', '1e15', '1e16', '123456789.125', '9e999', '-9e999', '1e21', '-1e-7', '2.0'];
// Expressions whose result is NaN in C (SQLite gives NULL) or that fail.
const ODD = ['0.0/0', '(9e999 - 9e999)', 'sqrt(-1)', 'acos(2)', 'ln(0)', 'ln(-1)', '1/0', '5 % 0',
  'abs(-9223372036854775808)', '9223372036854775807 + 1', '-9223372036854775808 - 1', "'12' + 0", "'1e3' * 1",
  "CAST('9223372036854775808' AS INTEGER)", "CAST('abc' AS REAL)", "CAST(1.9 AS INTEGER)", "CAST(-0.0 AS TEXT)",
  "CAST(x'41' AS INTEGER)", 'round(2.5)', 'round(-0.4)', "printf('%.20f', 0.1)", 'typeof(0.0/0)', 'likely(7)',
  'total(1)', "json_object('a', 1, 'b', 'x')", "json_array(1, 2.5, 'c', NULL)", "char(0)", "'a' || char(0) || 'b'",
  'char(55296)', 'char(56320, 65)', 'char(1114111)', 'hex(zeroblob(3))', 'unicode(\'😀\')', "upper('ß')"];

/** A SQL expression of some value or edge; `kind` names its family. */
export function sqlValue(g) {
  return g.weighted([
    [3, () => g.pick(INTEGERS)],
    [1, () => String(g.range(-1000000, 1000000))],
    [3, () => g.pick(REALS)],
    [1, () => (g.unit() * 10 ** g.range(-5, 20) * (g.chance(0.5) ? -1 : 1)).toPrecision(g.range(1, 17))],
    [3, () => g.pick(ODD)],
    [3, () => sqlText(randomText(g, g.range(0, 12)))],
    [1, () => `substr(hex(zeroblob(${g.range(100, 60000)})), 1, ${g.range(1, 100000)})`],
    [1, () => `CAST(x'${randomHex(g, g.range(0, 8))}' AS TEXT)`],
    [2, () => `x'${randomHex(g, g.range(0, 16))}'`],
    [1, () => `zeroblob(${g.range(0, 70000)})`],
    [2, () => 'NULL'],
    [1, () => `(${sqlValue(g)} ${g.pick(['+', '-', '*', '/', '||', '%', '&', '|', '<<', '=', '<'])} ${sqlValue(g)})`],
    [1, () => `CAST(${sqlValue(g)} AS ${g.pick(['INTEGER', 'REAL', 'TEXT', 'BLOB', 'NUMERIC', 'ANY'])})`],
    [1, () => `${g.pick(['typeof', 'length', 'quote', 'hex', 'abs', 'upper', 'trim', 'unicode', 'ifnull'])}(${sqlValue(g)})`],
  ])();
}

function randomHex(g, bytes) {
  let s = '';
  for (let i = 0; i < bytes; i++) s += g.int(256).toString(16).padStart(2, '0');
  return s;
}

/** A stored value for an INSERT: a literal (no failing expressions). */
export function storedValue(g) {
  return g.weighted([
    [3, () => g.pick(INTEGERS)],
    [3, () => g.pick(REALS)],
    [3, () => sqlText(randomText(g, g.range(0, 10)))],
    [2, () => `x'${randomHex(g, g.range(0, 6))}'`],
    [2, () => 'NULL'],
  ])();
}

// ------------------------------------------------------------------ JS values to bind

/** A JS value for a parameter: every type better-sqlite3 binds and some it refuses. */
export function jsValue(g) {
  return g.weighted([
    [3, () => g.pick([0, 1, -1, -0, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e308, 5e-324, NaN, Infinity, -Infinity])],
    [2, () => g.range(-1e6, 1e6)],
    [2, () => g.pick([0n, 1n, -1n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n])],
    [3, () => randomText(g, g.range(0, 10))],
    [1, () => g.pick(['\uD800', 'a\uDC00', '\uD83D\uDE00', 'x'.repeat(g.range(60, 70)), '😀'.repeat(g.range(1, 40))])],
    // Long enough for the statement to keep it and SQLite to read it in place.
    [1, () => g.pick(['x', 'é', '\uD83D\uDE00', 'y\uDC00']).repeat(g.range(100, 3000))],
    [2, () => Buffer.from(randomText(g, g.range(0, 6)))],
    [1, () => g.pick([new Uint8Array([1, 2, 3]), new Uint16Array([1]), new DataView(new ArrayBuffer(2)), new ArrayBuffer(2)])],
    [2, () => null],
    [1, () => undefined],
    [1, () => g.pick([true, false])],
    [1, () => g.pick([new Date(0), Symbol('s'), () => 1, [1, 2], { a: 1 }, new Map(), Object.create(null)])],
  ])();
}
