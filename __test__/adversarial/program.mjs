// One adversarial sequence in a process of its own, on one implementation:
//
//   node --expose-gc program.mjs <ours|reference> <seed> <index> <dir> <transcript file>
//
// Writes one JSON line per observation to the transcript file as it happens
// (synchronously, so a crash keeps what came before it): `[path, text]`, where `path` is the step's number (nested
// steps: `3/f0#2/1`, the first step of the program that f0's second call ran, inside step
// 3) and `text` what the step gave or threw (describe.mjs), the sequence's folder written
// as <dir>. The last line is `["end", maxRSS in KiB]`.
import { createHash } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { describe, describeError } from '../differential/describe.mjs';
import { makeSequence } from './generate.mjs';
import { materialize, paramsFor } from './values.mjs';

const require = createRequire(import.meta.url);

/** Where each implementation's better-sqlite3 entry is (the reference: for the running Node). */
export async function entryOf(impl) {
  if (impl === 'ours') return require.resolve('../../better-sqlite3.cjs');
  const { referenceDir, referenceMissing } = await import('../../tools/reference.mjs');
  const dir = referenceDir();
  if (!dir) throw new Error(referenceMissing());
  return dir;
}

const LONG = 4000;

/** Where observations go: the transcript file, written synchronously (see main). */
let sink = (line) => writeSync(1, line);

/** Sends observations elsewhere (to compare two runs in one process, when narrowing a finding down). */
export function setSink(write) {
  sink = write;
}

/** Writes one observation; a long text by its start, length and hash. */
function emit(dir, path, text) {
  let line = text.split(dir).join('<dir>');
  if (line.length > LONG) {
    const hash = createHash('sha1').update(line).digest('hex');
    line = `${line.slice(0, 300)}…[${line.length} chars, sha1 ${hash}]`;
  }
  sink(`${JSON.stringify([path, line])}\n`);
}

/** Functions of 0 to 3 declared parameters (better-sqlite3 takes a function's arity from its length). */
const ARITIES = [
  (body) => function fn() { return body(arguments); },
  (body) => function fn(a) { return body(arguments); },
  (body) => function fn(a, b) { return body(arguments); },
  (body) => function fn(a, b, c) { return body(arguments); },
];

export class Sequence {
  constructor(D, entry, dir) {
    this.D = D;
    this.entry = entry;
    this.dir = dir;
    this.dbs = [];
    this.stmts = [];
    this.iters = [];
    /** The names each database registered a callback under. */
    this.registered = new Map();
  }

  pick(list, k) {
    if (list.length === 0) throw new Error('none');
    return k === 'last' ? list.at(-1) : list[k % list.length];
  }

  /** A value as text, the sequence's own objects by their number. */
  show(value) {
    for (const [list, name] of [[this.dbs, 'db'], [this.stmts, 'stmt'], [this.iters, 'it']]) {
      const at = list.indexOf(value);
      if (at >= 0) return `${name}#${at}`;
    }
    return describe(value);
  }

  /** An object's own properties in order, with attributes, the sequence's objects by number. */
  shapeOf(object) {
    const keys = Reflect.ownKeys(object).map((key) => {
      const d = Object.getOwnPropertyDescriptor(object, key);
      const flags = `${d.enumerable ? 'e' : ''}${d.configurable ? 'c' : ''}${d.writable ? 'w' : ''}`;
      return `${String(key)}/${flags}=${'value' in d ? this.show(d.value) : 'accessor'}`;
    });
    return `${Object.isExtensible(object) ? '' : 'sealed '}{${keys.join(',')}}`;
  }

  observe(path, step, fn) {
    let text;
    try {
      text = fn();
    } catch (error) {
      text = describeError(error);
    }
    emit(this.dir, path, `${step.op}: ${text}`);
  }

  runAll(steps, path) {
    steps.forEach((step, i) => this.observe(`${path}/${i}`, step, () => this.run(step, `${path}/${i}`)));
  }

  /**
   * A callback that runs `b`'s program on every `b.every`-th call (its first four such
   * calls), then returns or throws as `b` says; on other calls it gives `echo(args)`.
   */
  callback(b, path, label, echo) {
    let calls = 0;
    let fired = 0;
    return (args) => {
      calls += 1;
      if (calls % b.every !== 0 || fired >= 4) return echo(args);
      fired += 1;
      const at = `${path}/${label}#${calls}`;
      emit(this.dir, at, `called with ${args.length} arguments`);
      if (b.gc) globalThis.gc?.();
      this.runAll(b.program, at);
      if (b.outcome.throws) throw materialize(b.outcome.throws, this.D);
      if (b.outcome.returns) return materialize(b.outcome.returns, this.D);
      return echo(args);
    };
  }

  options(options, path) {
    const out = { ...options };
    if (options.verbose) {
      const log = this.callback(options.verbose, path, 'log', () => undefined);
      out.verbose = (sql) => {
        emit(this.dir, `${path}/log`, `logged ${JSON.stringify(sql)}`);
        // A logger that throws on a savepoint's rollback is a documented difference.
        if (/^(ROLLBACK TO|RELEASE) /.test(sql)) return undefined;
        return log([sql]);
      };
    }
    return out;
  }

  open(step, path) {
    const { D, dir } = this;
    const options = this.options(step.options, path);
    const file = join(dir, `f${step.file}.db`);
    let db;
    switch (step.how) {
      case 'memory':
        db = new D(':memory:', options);
        break;
      case 'file':
        db = new D(file, options);
        break;
      case 'buffer': {
        const image = this.pick(this.dbs, step.from).serialize();
        db = new D(step.cut === null ? image : image.subarray(0, step.cut), options);
        break;
      }
      default:
        db = {
          number: () => new D(123),
          options: () => new D('', 'x'),
          'missing-dir': () => new D(join(dir, 'nodir', 'x.db')),
          readOnly: () => new D('', { readOnly: true }),
          memory: () => new D('', { memory: true }),
          timeout: () => new D('', { timeout: -1 }),
          verbose: () => new D('', { verbose: 'x' }),
          nul: () => new D(join(dir, 'n\0ul.db')),
        }[step.odd]();
    }
    this.dbs.push(db);
    return this.show(db);
  }

  /**
   * The statement of `step`; a step that fits (most) takes the next one that returns data
   * when it iterates, and runs a statement that returns none.
   */
  statementOf(step, method) {
    if (!step.fit) return [this.pick(this.stmts, step.stmt), method];
    for (let i = 0; i < this.stmts.length; i++) {
      const s = this.pick(this.stmts, step.stmt + i);
      if (s.reader || method === 'run' || method === 'get' || method === 'all') {
        return [s, s.reader ? (method === 'run' ? 'all' : method) : 'run'];
      }
    }
    return [this.pick(this.stmts, step.stmt), method];
  }

  params(spec, stmt) {
    return paramsFor(spec, stmt.source ?? '', this.D);
  }

  define(step, path) {
    const db = this.pick(this.dbs, step.db);
    if (step.op === 'function') {
      const run = this.callback(step.behaviour, path, step.name, (args) => args[0] ?? 0);
      return db.function(step.name, step.options, ARITIES[step.arity]((args) => run(args))) === db;
    }
    if (step.op === 'aggregate') {
      const accumulate = (args) => (typeof args[0] === 'number' ? args[0] + 1 : args[0]);
      const options = { ...step.options };
      options.start = step.start === 'function' ? () => 0 : step.start && materialize(step.start, this.D);
      if (step.start === null) delete options.start;
      const stepFn = this.callback(step.step, path, `${step.name}.step`, accumulate);
      options.step = function step(total, x) { return stepFn(arguments); };
      if (step.inverse) {
        const inverseFn = this.callback(step.inverse, path, `${step.name}.inverse`, accumulate);
        options.inverse = function inverse(total, x) { return inverseFn(arguments); };
      }
      if (step.result) options.result = this.callback(step.result, path, `${step.name}.result`, (args) => args[0]);
      return db.aggregate(step.name, options) === db;
    }
    const run = this.callback(step.behaviour, path, step.name, () => undefined);
    const definition = {
      columns: step.columns,
      parameters: step.parameters,
      *rows(...args) {
        for (let i = 0; i < step.rows; i++) {
          const out = run(args);
          if (out !== undefined) yield out;
          else if (step.shape === 'array') yield [i, `v${i}`];
          else if (step.shape === 'object') yield { y: i, x: `v${i}` };
          else if (step.shape === 'short') yield [i];
          else yield i;
        }
      },
    };
    if (!step.parameters) delete definition.parameters;
    return db.table(step.name, step.factory ? function factory() { return definition; } : definition) === db;
  }

  /** Runs one step (synchronously; backup and worker are run by `runAsync`). */
  run(step, path) {
    const db = () => this.pick(this.dbs, step.db);
    const stmt = () => this.pick(this.stmts, step.stmt);
    const it = () => this.pick(this.iters, step.it);
    switch (step.op) {
      case 'open':
        return this.open(step, path);
      case 'close':
        return this.show(db().close());
      case 'exec':
        return this.show(db().exec(step.sql));
      case 'prepare': {
        const s = db().prepare(step.sql);
        this.stmts.push(s);
        return `${this.show(s)} ${this.shapeOf(s)}`;
      }
      case 'call':
        {
        const [s, method] = this.statementOf(step, step.method);
        return this.show(s[method](...this.params(step.params, s)));
      }
      case 'iterate': {
        const [s] = this.statementOf(step, 'iterate');
        const iterator = s.iterate(...this.params(step.params, s));
        this.iters.push(iterator);
        return `${this.show(iterator)} ${this.shapeOf(iterator)}`;
      }
      case 'next':
        return this.show(it().next());
      case 'return':
        return this.show(it().return());
      case 'drain':
        return this.show([...it()]);
      case 'loop': {
        let rows = 0;
        const [s] = this.statementOf(step, 'iterate');
        for (const row of s.iterate(...this.params(step.params, s))) {
          rows += 1;
          emit(this.dir, `${path}/row${rows}`, `row ${this.show(row)}`);
          this.runAll(step.program, `${path}/row${rows}`);
          // A loop body runs on a few rows only: the sequence stays short.
          if (rows === (step.breakAt || 25)) break;
        }
        return `${rows} rows`;
      }
      case 'bind':
        {
        const s = stmt();
        return this.show(s.bind(...this.params(step.params, s)));
      }
      case 'mode':
        return this.show(stmt()[step.which](...step.args));
      case 'columns':
        return this.show(stmt().columns());
      case 'shape':
        return this.shapeOf(this.pick(step.of === 'stmt' ? this.stmts : this.iters, step.k));
      case 'tag': {
        const s = stmt();
        s.tag = step.value;
        return this.shapeOf(s);
      }
      case 'misuse':
        return this.misuse(step);
      case 'pragma':
        return this.show(db().pragma(step.source, step.options));
      case 'function':
      case 'aggregate':
      case 'table': {
        // A name registered again on a database is not generated: statements compiled at
        // other moments may call either registration (docs/better-sqlite3-api.md, a reused
        // prepare()); the differential suite's function cases redefine.
        const names = this.registered.get(db()) ?? new Set();
        if (names.has(step.name)) return 'registered before';
        const defined = this.define(step, path);
        this.registered.set(db(), names.add(step.name));
        return this.show(defined);
      }
      case 'tx': {
        const fn = db().transaction(() => {
          this.runAll(step.program, path);
          if (step.throws) throw materialize(step.throws, this.D);
          return 'committed';
        });
        return this.show(step.variant === 'default' ? fn() : fn[step.variant]());
      }
      case 'unsafe':
        return this.show(db().unsafeMode(...step.args));
      case 'defaultSafe':
        return this.show(db().defaultSafeIntegers(...step.args));
      case 'serialize': {
        const bytes = db().serialize(step.options);
        // Bytes 92-99 hold the SQLite version that wrote the file.
        bytes.fill(0, 92, 100);
        return `${bytes.length} bytes, sha1 ${createHash('sha1').update(bytes).digest('hex')}`;
      }
      case 'loadExtension':
        return this.show(db().loadExtension(join(this.dir, 'no-such-extension')));
      case 'gc':
        return this.show(globalThis.gc?.());
      case 'props': {
        const d = db();
        return this.show([d.open, d.inTransaction, d.name, d.memory, d.readonly]);
      }
      default:
        throw new Error(`adversarial: no op ${step.op}`);
    }
  }

  misuse(step) {
    const object = this.pick(step.of === 'stmt' ? this.stmts : this.iters, step.k);
    const proto = Object.getPrototypeOf(object);
    const method = proto[step.method] ?? proto[step.of === 'stmt' ? 'get' : 'next'];
    const other = step.of === 'stmt' ? this.iters[0] ?? {} : this.stmts[0] ?? {};
    const receiver = { object: {}, null: null, other }[step.receiver];
    return this.show(method.call(receiver));
  }

  async backup(step, path) {
    let options = step.options;
    if (step.progress) {
      const progress = this.callback(step.progress, path, 'progress', () => undefined);
      options = { ...options, progress: (info) => progress([info]) };
    }
    const result = await this.pick(this.dbs, step.db).backup(join(this.dir, `b${step.file}.db`), options);
    return this.show(result);
  }

  async worker(step) {
    const file = join(this.dir, `f${step.file}.db`);
    const worker = new Worker(new URL('./worker.mjs', import.meta.url), { workerData: { entry: this.entry, file, script: step.script } });
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    const first = await new Promise((resolve) => {
      worker.once('message', resolve);
      worker.once('error', (e) => resolve(`error ${e?.message}`));
      exited.then(() => resolve('exited'));
    });
    await new Promise((resolve) => setTimeout(resolve, step.delay));
    const code = await worker.terminate();
    await exited;
    // The worker's connection must be gone with it: its locks released, the file intact.
    const check = new this.D(file, { timeout: 2000 });
    try {
      check.exec('BEGIN IMMEDIATE; COMMIT');
      return `${first}, exit ${code}, then ${check.pragma('integrity_check', { simple: true })}`;
    } finally {
      check.close();
    }
  }

  async runTop(steps) {
    for (const [i, step] of steps.entries()) {
      const path = String(i);
      if (step.op !== 'backup' && step.op !== 'worker') {
        this.observe(path, step, () => this.run(step, path));
        continue;
      }
      let text;
      try {
        text = await (step.op === 'backup' ? this.backup(step, path) : this.worker(step));
      } catch (error) {
        text = describeError(error);
      }
      emit(this.dir, path, `${step.op}: ${text}`);
    }
  }
}

async function main() {
  const [impl, seed, index, dir, output] = process.argv.slice(2);
  const transcript = openSync(output, 'w');
  setSink((line) => writeSync(transcript, line));
  const entry = await entryOf(impl);
  const D = require(entry);
  const { steps } = makeSequence(Number(seed), Number(index));
  const sequence = new Sequence(D, entry, dir);
  // A failure of the harness itself, or one escaping from the library, is reported as such.
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    process.on(event, (error) => {
      emit(dir, 'uncaught', describeError(error));
      process.exit(70);
    });
  }
  await sequence.runTop(steps);
  emit(dir, 'end', String(process.resourceUsage().maxRSS));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
