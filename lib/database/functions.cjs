'use strict';
// db.function(), db.aggregate() and db.table(): better-sqlite3 12's checks, defaults and
// messages, in its order, in front of the native registrations (src/engine/callbacks/functions.rs,
// src/engine/callbacks/tables.rs). SQLite runs the callbacks inside a statement step, on this
// thread; a callback that throws makes that statement call throw the same value.

const native = require('../native.cjs');
const { aggregateTrampolines, deliverer, scalarTrampoline } = require('./call-frame.cjs');
const { defaultSafeIntegers } = require('./connection-state.cjs');

const { hasOwnProperty } = Object.prototype;
const GeneratorFunction = Object.getPrototypeOf(function* () {});
/** better-sqlite3's value for "the connection's default" (safeIntegers not given). */
const DEFAULT = 2;

function booleanOption(options, key) {
  let value = false;
  if (key in options && typeof (value = options[key]) !== 'boolean') {
    throw new TypeError(`Expected the "${key}" option to be a boolean`);
  }
  return value;
}

/** 0, 1, or DEFAULT when the option is absent. */
function safeIntegersOption(options) {
  return 'safeIntegers' in options ? +booleanOption(options, 'safeIntegers') : DEFAULT;
}

/**
 * Whether integers reach callbacks as BigInt: the option, else the connection's default
 * as of now (better-sqlite3 reads it at registration, and for a table when SQLite
 * connects it): `db.defaultSafeIntegers()`.
 */
function resolveSafeIntegers(n, value) {
  return value === DEFAULT ? defaultSafeIntegers(n) : value === 1;
}

function functionLength(fn) {
  const { length } = fn;
  if (!Number.isInteger(length) || length < 0) throw new TypeError('Expected function.length to be a positive integer');
  return length;
}

function checkArgCount(count) {
  if (count > 100) throw new RangeError('User-defined functions cannot have more than 100 arguments');
  return count;
}

function registerFunction(db, n, name, options, fn) {
  if (options == null) options = {};
  if (typeof options === 'function') {
    fn = options;
    options = {};
  }
  if (typeof name !== 'string') throw new TypeError('Expected first argument to be a string');
  if (typeof fn !== 'function') throw new TypeError('Expected last argument to be a function');
  if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
  if (!name) throw new TypeError('User-defined function name cannot be an empty string');
  const safeIntegers = safeIntegersOption(options);
  const deterministic = booleanOption(options, 'deterministic');
  const directOnly = booleanOption(options, 'directOnly');
  const varargs = booleanOption(options, 'varargs');
  const argCount = varargs ? -1 : checkArgCount(functionLength(fn));
  native.facadeFunction(
    n.handle, scalarTrampoline(fn, argCount), name, argCount,
    resolveSafeIntegers(n, safeIntegers), deterministic, directOnly,
  );
}

function functionOption(options, key, required) {
  const value = key in options ? options[key] : null;
  if (typeof value === 'function') return value;
  if (value != null) throw new TypeError(`Expected the "${key}" option to be a function`);
  if (required) throw new TypeError(`Missing required option "${key}"`);
  return null;
}

function registerAggregate(db, n, name, options) {
  if (typeof name !== 'string') throw new TypeError('Expected first argument to be a string');
  if (typeof options !== 'object' || options === null) throw new TypeError('Expected second argument to be an options object');
  if (!name) throw new TypeError('User-defined function name cannot be an empty string');
  const start = 'start' in options ? options.start : null;
  const step = functionOption(options, 'step', true);
  const inverse = functionOption(options, 'inverse', false);
  const result = functionOption(options, 'result', false);
  const safeIntegers = safeIntegersOption(options);
  const deterministic = booleanOption(options, 'deterministic');
  const directOnly = booleanOption(options, 'directOnly');
  const varargs = booleanOption(options, 'varargs');
  let argCount = -1;
  if (!varargs) {
    // The accumulator is the callbacks' first argument, not SQL's.
    argCount = Math.max(functionLength(step), inverse ? functionLength(inverse) : 0);
    if (argCount > 0) argCount -= 1;
    checkArgCount(argCount);
  }
  const [stepCall, inverseCall, valueCall, run] = aggregateTrampolines(start, step, inverse, result, argCount);
  native.facadeAggregate(
    n.handle, stepCall, inverseCall, valueCall, run, deliverer(), result !== null, name, argCount,
    resolveSafeIntegers(n, safeIntegers), deterministic, directOnly,
  );
}

function registerTable(db, n, name, factory) {
  if (typeof name !== 'string') throw new TypeError('Expected first argument to be a string');
  if (!name) throw new TypeError('Virtual table module name cannot be an empty string');
  let eponymous = false;
  let tableOf;
  if (typeof factory === 'object' && factory !== null) {
    // A definition: one table under the module's own name, checked now.
    eponymous = true;
    const table = tableDefinition(factory, 'used', name);
    tableOf = () => table;
  } else {
    if (typeof factory !== 'function') throw new TypeError('Expected second argument to be a function or a table definition object');
    tableOf = tablesFrom(factory);
  }
  // SQLite asks once per table: (module, database, table, ...module arguments).
  const connect = function virtualTableFactory(...args) {
    const [sql, rows, parameters, safeIntegers, directOnly] = tableOf(...args);
    return [sql, rows, parameters, resolveSafeIntegers(n, safeIntegers), directOnly];
  };
  native.facadeTable(n.handle, connect, name, eponymous);
}

/** The factory form: each CREATE VIRTUAL TABLE calls the user's factory with its arguments. */
function tablesFrom(factory) {
  return (moduleName, databaseName, tableName, ...args) => {
    const self = { module: moduleName, database: databaseName, table: tableName };
    const def = Reflect.apply(factory, self, args);
    if (typeof def !== 'object' || def === null) {
      throw new TypeError(`Virtual table module "${moduleName}" did not return a table definition object`);
    }
    return tableDefinition(def, 'returned', moduleName);
  };
}

function stringList(value) {
  if (!Array.isArray(value)) return null;
  const copy = [...value];
  return copy.every((x) => typeof x === 'string') ? copy : null;
}

const quoted = (name) => `"${name.replace(/"/g, '""')}"`;

/** A checked table definition: [sql, open (see tableRows), parameters, safeIntegers, directOnly]. */
function tableDefinition(def, verb, moduleName) {
  const fail = (Kind, what) => new Kind(`Virtual table module "${moduleName}" ${verb} a table definition ${what}`);
  if (!hasOwnProperty.call(def, 'rows')) throw fail(TypeError, 'without a "rows" property');
  if (!hasOwnProperty.call(def, 'columns')) throw fail(TypeError, 'without a "columns" property');
  const { rows } = def;
  if (typeof rows !== 'function' || Object.getPrototypeOf(rows) !== GeneratorFunction) {
    throw fail(TypeError, 'with an invalid "rows" property (should be a generator function)');
  }
  const columns = stringList(def.columns);
  if (columns === null) throw fail(TypeError, 'with an invalid "columns" property (should be an array of strings)');
  if (new Set(columns).size !== columns.length) throw fail(TypeError, 'with duplicate column names');
  if (columns.length === 0) throw fail(RangeError, 'with zero columns');
  let parameters;
  if (hasOwnProperty.call(def, 'parameters')) {
    parameters = stringList(def.parameters);
    if (parameters === null) throw fail(TypeError, 'with an invalid "parameters" property (should be an array of strings)');
  } else {
    // $1, $2, ... as many as the generator declares.
    parameters = Array.from({ length: functionLength(rows) }, (_, i) => `$${i + 1}`);
  }
  if (new Set(parameters).size !== parameters.length) throw fail(TypeError, 'with duplicate parameter names');
  if (parameters.length > 32) throw fail(RangeError, 'with more than the maximum number of 32 parameters');
  for (const parameter of parameters) {
    if (columns.includes(parameter)) {
      throw fail(TypeError, `with column "${parameter}" which was ambiguously defined as both a column and parameter`);
    }
  }
  let safeIntegers = DEFAULT;
  if (hasOwnProperty.call(def, 'safeIntegers')) {
    if (typeof def.safeIntegers !== 'boolean') throw fail(TypeError, 'with an invalid "safeIntegers" property (should be a boolean)');
    safeIntegers = +def.safeIntegers;
  }
  let directOnly = false;
  if (hasOwnProperty.call(def, 'directOnly')) {
    directOnly = def.directOnly;
    if (typeof directOnly !== 'boolean') throw fail(TypeError, 'with an invalid "directOnly" property (should be a boolean)');
  }
  const declared = [...parameters.map((p) => `${quoted(p)} HIDDEN`), ...columns.map(quoted)];
  const columnIndex = new Map(columns.map((column, i) => [column, parameters.length + i]));
  return [`CREATE TABLE x(${declared.join(', ')});`, tableRows(rows, columnIndex, moduleName), parameters, safeIntegers, directOnly];
}

/**
 * The scan SQLite runs for each query: `open(...args)` gives `[row, pull]`, where each
 * `pull()` refills `row` (one array for the whole scan: the scan's arguments, its
 * hidden parameter columns, first, then the columns) with the generator's next row and
 * returns true, or returns false at the end. The checks are better-sqlite3's; like its
 * for...of, a row that fails them closes the generator (return()) before the throw.
 */
function tableRows(generator, columnIndex, moduleName) {
  const width = columnIndex.size;
  const invalid = (what) => new TypeError(`Virtual table module "${moduleName}" yielded ${what}`);
  return function open(...args) {
    // A copy of each Buffer argument: the generator may change its own, not the
    // hidden column's value.
    const row = args.map((x) => (Buffer.isBuffer(x) ? Buffer.from(x) : x));
    const offset = row.length;
    for (let i = 0; i < width; ++i) row.push(null);
    const iterator = generator(...args);
    const { next } = iterator;
    const fill = (yielded) => {
      if (Array.isArray(yielded)) {
        if (yielded.length !== width) throw invalid('a row with an incorrect number of columns');
        for (let i = 0; i < width; ++i) row[offset + i] = yielded[i];
      } else if (typeof yielded === 'object' && yielded !== null) {
        let count = 0;
        for (const key of Object.keys(yielded)) {
          const index = columnIndex.get(key);
          if (index === undefined) throw invalid(`a row with an undeclared column "${key}"`);
          row[index] = yielded[key];
          count += 1;
        }
        if (count !== width) throw invalid('a row with missing columns');
      } else {
        throw invalid("something that isn't a valid row object");
      }
    };
    const pull = () => {
      const step = next.call(iterator);
      if (step.done) return false;
      try {
        fill(step.value);
      } catch (error) {
        try {
          iterator.return();
        } catch {}
        throw error;
      }
      return true;
    };
    return [row, pull];
  };
}

/**
 * The three methods, for Database.prototype; `nativeOf(db)` is the db's connection and
 * `forgetStatements(n)` drops its shared statements once a registration succeeded.
 */
/** db.function, db.aggregate and db.table, named as better-sqlite3 names them. */
function callbackMethods(nativeOf, forgetStatements) {
  return {
    function: function defineFunction(name, options, fn) {
      const n = nativeOf(this);
      registerFunction(this, n, name, options, fn);
      forgetStatements(n);
      return this;
    },
    aggregate: function defineAggregate(name, options) {
      const n = nativeOf(this);
      registerAggregate(this, n, name, options);
      forgetStatements(n);
      return this;
    },
    table: function defineTable(name, factory) {
      const n = nativeOf(this);
      registerTable(this, n, name, factory);
      forgetStatements(n);
      return this;
    },
  };
}

module.exports = { callbackMethods };
