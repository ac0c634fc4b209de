// Statement and iterator objects as better-sqlite3 makes them, beside it: extensible,
// their own properties (`busy` first) read by Object.keys, JSON.stringify and spread,
// what a caller's own properties do, and the errors of methods called on other objects.
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Database } from '../index.mjs';
import { differentialTest } from './helpers.mjs';

const require = createRequire(import.meta.url);
const CommonJsDatabase = require('../better-sqlite3.cjs');

const differential = (name, script) =>
  differentialTest(name, script, [['ESM', Database], ['CommonJS', CommonJsDatabase]]);

/** A statement's own properties without the database object (compared on its own). */
const own = (s) => JSON.stringify({ ...s, database: s.database === undefined ? 'none' : 'db' });

differential('statements and iterators: extensible, own properties, keys, JSON and spread', (D, dir, step) => {
  const db = new D(join(dir, 'objects.db'));
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)');
  const s = db.prepare('SELECT a FROM t ORDER BY a');
  step('keys', () => Object.keys(s));
  step('own names', () => Object.getOwnPropertyNames(s));
  step('descriptors', () => Object.getOwnPropertyNames(s).map((k) => [k, { ...Object.getOwnPropertyDescriptor(s, k), value: k === 'database' ? 'db' : s[k] }]));
  step('spread', () => own(s));
  step('JSON', () => JSON.stringify(s, (k, v) => (k === 'database' ? 'db' : v)));
  step('extensible, frozen, sealed', () => [Object.isExtensible(s), Object.isFrozen(s), Object.isSealed(s)]);
  step('a tag of its own', () => {
    s.tag = 1;
    return [s.tag, Object.keys(s)];
  });
  step('bind() tests set __bound', () => {
    s.__bound = true;
    return s.__bound;
  });
  step('source is read-only', () => {
    s.source = 'x';
  });
  step('reader cannot be deleted', () => delete s.reader);
  step('reader cannot be redefined', () => Object.defineProperty(s, 'reader', { value: false }));
  const it = s.iterate();
  step('busy while iterating', () => [s.busy, Object.getOwnPropertyDescriptor(s, 'busy'), own(s)]);
  step('iterator keys', () => Object.keys(it));
  step('iterator own names and symbols', () => Reflect.ownKeys(it).map(String));
  step('iterator statement descriptor', () => {
    const { value, ...rest } = Object.getOwnPropertyDescriptor(it, 'statement');
    return [value === s, rest];
  });
  step('iterator JSON', () => JSON.stringify(it, (k, v) => (k === 'database' ? 'db' : v)));
  step('iterator is its own iterator', () => it[Symbol.iterator]() === it);
  step('iterator extensible', () => {
    it.tag = 2;
    return [Object.isExtensible(it), it.tag, Object.keys(it)];
  });
  step('iterator statement is read-only', () => {
    it.statement = null;
  });
  step('rows', () => [...it]);
  step('busy after', () => [s.busy, own(s)]);
  step('deleted busy stays deleted', () => {
    delete s.busy;
    const again = s.iterate();
    const seen = [Object.keys(s), s.busy];
    again.return();
    return [...seen, Object.keys(s)];
  });
  step('prototypes', () => [Object.getPrototypeOf(Object.getPrototypeOf(s)) === Object.prototype, Object.getPrototypeOf(s).constructor.name, Object.getPrototypeOf(it).constructor.name]);
});

differential('methods on other objects: Illegal invocation; the constructors refuse', (D, dir, step) => {
  const db = new D(join(dir, 'misuse.db'));
  const s = db.prepare('SELECT 1 AS x');
  const it = db.prepare('SELECT 2 AS y').iterate();
  const others = { 'a plain object': {}, 'null': null, 'a number': 1, 'a derived object': Object.create(s), 'the iterator': it };
  for (const method of ['run', 'get', 'all', 'iterate', 'bind', 'pluck', 'expand', 'raw', 'safeIntegers', 'columns']) {
    for (const [label, other] of Object.entries(others)) step(`${method} on ${label}`, () => s[method].call(other));
  }
  for (const method of ['next', 'return', Symbol.iterator]) {
    for (const [label, other] of Object.entries({ ...others, 'the statement': s, 'a derived object': Object.create(it) })) {
      step(`iterator ${String(method)} on ${label}`, () => {
        const out = it[method].call(other);
        return out === it ? 'the iterator' : out;
      });
    }
  }
  const { constructor: Statement } = Object.getPrototypeOf(s);
  const { constructor: StatementIterator } = Object.getPrototypeOf(it);
  step('Statement()', () => Statement());
  step('new Statement()', () => new Statement('SELECT 1', db));
  step('StatementIterator()', () => StatementIterator());
  step('new StatementIterator()', () => new StatementIterator());
  step('instanceof', () => [s instanceof Statement, it instanceof StatementIterator, Statement.prototype === Object.getPrototypeOf(s)]);
  step('constructors', () => [Statement.name, Statement.length, StatementIterator.name, StatementIterator.length]);
  step('the iterator still works', () => it.next());
});
