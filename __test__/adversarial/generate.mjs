// Seeded adversarial call sequences over better-sqlite3's whole API: each step is data
// (`{ op, ... }`, run by program.mjs), so a sequence prints and reruns from its seed and
// number alone. Steps refer to the databases, statements and iterators made so far by
// number (taken modulo how many exist), so every step stays meaningful whatever failed
// before it. Callbacks, loops and transactions carry programs of nested steps: re-entrant
// calls, closes at every point, iterators used across callbacks.
import { Random, randomText } from '../differential/random.mjs';
import { PRAGMAS, SETUP, paramsSpec, sqlOf, thrownSpec, valueSpec } from './values.mjs';

/** How deep programs nest (a callback's program may hold a loop whose body calls...). */
const MAX_DEPTH = 3;
const FILES = 3;

const any = (g) => g.int(8);

/**
 * What callbacks other than a function's return: an aggregate's step its new running value;
 * a backup's progress the pages of its next step (never fewer than one: a backup that
 * copies no page goes on for ever, in better-sqlite3 too), or a value it refuses.
 */
const OUTCOMES = {
  accumulator: [['n', 10], ['undefined'], ['s', 'x'], ['n', -1]],
  progress: [['n', 1], ['n', 7], ['n', 1e9], ['undefined'], ['s', 'x'], ['n', 'NaN'], ['b', '5']],
};

/** What a callback does on every `every`-th call (a few of them): runs `program`, then `outcome`. */
function behaviour(g, depth, outcomes = 'value') {
  const outcome = g.weighted([
    [6, () => 'echo'],
    [2, () => ({ returns: outcomes === 'value' ? valueSpec(g) : g.pick(OUTCOMES[outcomes]) })],
    [2, () => ({ throws: thrownSpec(g) })],
  ])();
  return {
    every: g.pick([1, 1, 2, 3, 5]),
    program: depth < MAX_DEPTH && g.chance(0.6) ? program(g, depth + 1, g.range(1, 3)) : [],
    outcome,
    gc: g.chance(0.05),
  };
}

function functionStep(g, depth) {
  const name = g.pick(['f0', 'f0', 'f1', 'f2']);
  const arity = { f0: 1, f1: 2, f2: 2 }[name];
  return {
    op: 'function',
    db: any(g),
    name,
    arity: g.chance(0.9) ? arity : g.range(0, 3),
    options: g.weighted([
      [5, () => ({})],
      [1, () => ({ varargs: true })],
      [1, () => ({ deterministic: true, directOnly: g.chance(0.5) })],
      [1, () => ({ safeIntegers: g.chance(0.5) })],
      [1, () => ({ varargs: 'yes' })],
    ])(),
    behaviour: behaviour(g, depth),
  };
}

function aggregateStep(g, depth) {
  const window = g.chance(0.5);
  return {
    op: 'aggregate',
    db: any(g),
    name: window ? 'a1' : 'a0',
    start: g.weighted([[3, () => ['n', 0]], [1, () => null], [1, () => 'function'], [1, () => ['b', '0']]])(),
    step: behaviour(g, depth, 'accumulator'),
    inverse: window && g.chance(0.8) ? behaviour(g, depth, 'accumulator') : null,
    result: g.chance(0.5) ? behaviour(g, depth) : null,
    options: g.chance(0.8) ? {} : { safeIntegers: true },
  };
}

function tableStep(g, depth) {
  const name = g.pick(['v0', 'v1', 'v2']);
  return {
    op: 'table',
    db: any(g),
    name,
    factory: name === 'v2',
    columns: g.chance(0.9) ? ['x', 'y'] : g.pick([[], ['x', 'x'], 'x']),
    parameters: name === 'v1' ? ['p'] : undefined,
    rows: g.range(0, 5),
    shape: g.weighted([[4, () => 'array'], [3, () => 'object'], [1, () => 'short'], [1, () => 'bad']])(),
    behaviour: behaviour(g, depth),
  };
}

function openStep(g, depth) {
  const how = g.weighted([[4, () => 'memory'], [4, () => 'file'], [2, () => 'buffer'], [1, () => 'odd']])();
  const options = {};
  if (g.chance(0.25)) options.verbose = behaviour(g, depth);
  if (how === 'file') {
    options.timeout = g.pick([0, 20]);
    if (g.chance(0.15)) options.readonly = true;
    if (g.chance(0.1)) options.fileMustExist = true;
  }
  if (how === 'buffer' && g.chance(0.3)) options.readonly = g.chance(0.5);
  return {
    op: 'open',
    how,
    file: g.int(FILES),
    from: any(g),
    cut: how === 'buffer' && g.chance(0.3) ? g.pick([0, 1, 99, 100, 512, 4096]) : null,
    odd: how === 'odd' ? g.pick(['number', 'options', 'missing-dir', 'readOnly', 'memory', 'timeout', 'verbose', 'nul']) : null,
    options,
  };
}

/** One step; `depth` > 0 inside a callback, a loop body or a transaction. */
function step(g, depth) {
  const nested = depth > 0;
  const deeper = depth < MAX_DEPTH;
  return g.weighted([
    [nested ? 1 : 3, () => openStep(g, depth)],
    [2, () => ({ op: 'close', db: any(g) })],
    [4, () => ({ op: 'exec', db: any(g), sql: g.chance(0.8) ? sqlOf(g) : `${sqlOf(g)}; ${sqlOf(g)}` })],
    [8, () => ({ op: 'prepare', db: any(g), sql: sqlOf(g) })],
    [12, () => ({ op: 'call', stmt: any(g), method: g.pick(['run', 'get', 'get', 'all', 'all']), fit: g.chance(0.85), params: paramsSpec(g) })],
    [5, () => ({ op: 'iterate', stmt: any(g), fit: g.chance(0.85), params: paramsSpec(g) })],
    [6, () => ({ op: 'next', it: any(g) })],
    [2, () => ({ op: 'return', it: any(g) })],
    [2, () => ({ op: 'drain', it: any(g) })],
    [deeper ? 3 : 0, () => ({ op: 'loop', stmt: any(g), fit: g.chance(0.85), params: paramsSpec(g), program: program(g, depth + 1, g.range(1, 3)), breakAt: g.pick([0, 1, 2, 5]) })],
    [2, () => ({ op: 'bind', stmt: any(g), params: paramsSpec(g) })],
    [3, () => ({ op: 'mode', stmt: any(g), which: g.pick(['pluck', 'raw', 'expand', 'safeIntegers']), args: g.pick([[], [true], [false], [1]]) })],
    [1, () => ({ op: 'columns', stmt: any(g) })],
    [1, () => ({ op: 'shape', of: g.pick(['stmt', 'iter']), k: any(g) })],
    [1, () => ({ op: 'tag', stmt: any(g), value: randomText(g, 3) })],
    [1, () => ({ op: 'misuse', of: g.pick(['stmt', 'iter']), k: any(g), method: g.pick(['get', 'run', 'all', 'iterate', 'bind', 'pluck', 'columns', 'next', 'return']), receiver: g.pick(['object', 'null', 'other']) })],
    [3, () => ({ op: 'pragma', db: any(g), source: g.pick(PRAGMAS), options: g.pick([undefined, { simple: true }, { simple: 'yes' }, 5]) })],
    [deeper ? 3 : 1, () => functionStep(g, depth)],
    [deeper ? 2 : 1, () => aggregateStep(g, depth)],
    [deeper ? 2 : 1, () => tableStep(g, depth)],
    [deeper ? 3 : 0, () => ({ op: 'tx', db: any(g), variant: g.pick(['default', 'deferred', 'immediate', 'exclusive']), program: program(g, depth + 1, g.range(1, 4)), throws: g.chance(0.3) ? thrownSpec(g) : null })],
    [2, () => ({ op: 'unsafe', db: any(g), args: g.pick([[], [true], [false], ['on']]) })],
    [1, () => ({ op: 'defaultSafe', db: any(g), args: g.pick([[], [true], [false]]) })],
    [2, () => ({ op: 'serialize', db: any(g), options: g.pick([undefined, { attached: 'main' }, { attached: 'temp' }, { attached: 'aux' }, { attached: 'nope' }, { attached: '' }]) })],
    [nested ? 0 : 1, () => ({ op: 'backup', db: any(g), file: g.int(FILES + 2), options: g.pick([undefined, { attached: 'nope' }, { attached: 'aux' }, {}]), progress: g.chance(0.5) ? behaviour(g, depth, 'progress') : null })],
    [1, () => ({ op: 'loadExtension', db: any(g) })],
    [1, () => ({ op: 'gc' })],
    [1, () => ({ op: 'props', db: any(g) })],
  ])();
}

function program(g, depth, length) {
  const steps = [];
  while (steps.length < length) {
    const next = step(g, depth);
    steps.push(next);
    // Most databases opened later get the usual tables, callbacks and statements too.
    if (next.op === 'open' && depth === 0 && g.chance(0.6)) steps.push(...setUp(g, 'last', null));
  }
  return steps;
}

/**
 * A database opened `how` with the usual tables, its callbacks and a few statements (`db`:
 * its number, or 'last'); with `how` null, all but the opening, for a database just opened.
 */
function setUp(g, db, how) {
  const steps = [{ op: 'open', how, file: 0, options: how === 'file' ? { timeout: 20 } : {} }, { op: 'exec', db, sql: SETUP }];
  if (how === null) steps.shift();
  for (const name of ['f0', 'f1', 'f2']) steps.push({ ...functionStep(g, 0), db, name, arity: name === 'f0' ? 1 : 2, options: {} });
  for (const name of ['a0', 'a1']) steps.push({ ...aggregateStep(g, 0), db, name });
  for (const name of ['v0', 'v1', 'v2']) steps.push({ ...tableStep(g, 0), db, name, factory: name === 'v2', parameters: name === 'v1' ? ['p'] : undefined });
  for (let i = g.range(1, 4); i > 0; i--) steps.push({ op: 'prepare', db, sql: sqlOf(g, [[2, 'read'], [4, 'calls'], [2, 'write']]) });
  return steps;
}

/**
 * Sequence `index` of `seed`: a database (sometimes two) with the usual tables, callbacks
 * and statements, then 20 to 60 steps; one sequence in ten also runs a worker thread on
 * one of its files and terminates it in the middle of a statement.
 */
export function makeSequence(seed, index) {
  const g = new Random(BigInt(seed) * 1000003n + BigInt(index));
  const steps = setUp(g, 0, 'memory');
  if (g.chance(0.4)) steps.push(...setUp(g, 1, 'file'));
  steps.push(...program(g, 0, g.range(20, 60)));
  if (g.chance(0.1)) {
    const at = g.range(2, steps.length);
    steps.splice(at, 0, { op: 'worker', file: g.int(FILES), script: g.pick(['function', 'transaction', 'iterator']), delay: g.pick([0, 1, 5]) });
  }
  return { seed, index, steps };
}
