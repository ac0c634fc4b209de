// The glue writes small functions at run time (a row's object literal per shape, a named
// statement's reads per statement, a user function's trampoline). Under
// --disallow-code-generation-from-strings it builds the same rows, binds the same values
// and calls the same functions without them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import test from 'node:test';

import { tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);

/** Store and facade calls whose results do not depend on the clock or on random ids. */
const SCRIPT = `
const { createStore } = require(${JSON.stringify(require.resolve('../index.cjs'))});
const s = createStore(process.argv[1]);
const out = [];
out.push(s.registerAgent({ agent_id: 'a1', cli: 'codex', pid: 7, capabilities: ['x', 'y'],
  topics: ['t'], heartbeat_ttl_ms: 30000, metadata: { host: 'h', n: 1, __proto__: { p: 1 } } }));
out.push(s.getAgent('a1'));
out.push(s.createAssign({ job_id: 'j1', supervisor_agent: 's', worker_agent: 'w', task: 'do',
  payload: { k: [1, 2] }, priority: 3 }));
out.push(s.updateAssignStatus('j1', 'running', { result: { step: 1 } }));
out.push(s.listAssigns({ worker_agent: 'w' }));
out.push(s.addReflexion({ error_pattern: 'E1', error_message: 'm', context: { file: 'f' }, solution: 'fix' }));
out.push(s.findReflexion('E1'));
const db = s.db;
db.exec('CREATE TABLE odd ("__proto__" TEXT, "a b" INTEGER, "" TEXT)');
db.prepare('INSERT INTO odd VALUES (?, ?, ?)').run('p', 2, 'e');
out.push(db.prepare('SELECT * FROM odd').get(), db.prepare('SELECT * FROM odd').all());
out.push(Object.getPrototypeOf(db.prepare('SELECT * FROM odd').get()) === Object.prototype);
// Lone rows of numbers only, built from the row lane.
out.push(db.prepare('SELECT 1 AS a, 2.5 AS b').get(), db.prepare('SELECT 1 AS a, 2.5 AS b').raw().get());
out.push(String(Object.entries(db.prepare('SELECT 1 AS a, 2 AS b').safeIntegers().get())));
out.push(db.prepare('SELECT 1 AS "__proto__", 2.5 AS "a b"').get());
// Lone rows of numbers and one other value, held apart (the call's result).
out.push(db.prepare("SELECT 1 AS a, 'x' AS b, 2.5 AS c").get(), db.prepare('SELECT NULL AS a, 2 AS b').raw().get());
out.push(db.prepare('SELECT char(112) AS "__proto__", 2.5 AS "a b"').get());
// User functions of each argument count, whose trampolines are compiled per function.
db.function('f0', () => 'zero');
db.function('f1', (a) => a * 2);
db.function('f2', (a, b) => \`\${a}-\${b}\`);
db.function('f3', (a, b, c) => [a, b, c].join('|'));
db.function('f4', (a, b, c, d) => a - b + c * d);
db.function('fv', { varargs: true }, (...xs) => xs.join('+'));
out.push(db.prepare("SELECT f0() AS a, f1(21) AS b, f2('x', 2.5) AS c, f3(1, 'y', NULL) AS d, f4(10, 4, 3, 2) AS e, fv(1, 'z', 3.5) AS f").get());
// Aggregates of each argument count, a window one among them, whose trampolines and
// delivery are compiled per aggregate.
db.aggregate('g0', { start: () => [], step: (acc) => { acc.push('n'); }, result: (acc) => acc.join('') });
db.aggregate('g1', { start: 0, step: (t, x) => t + x });
db.aggregate('g2', { start: '', step: (t, x, y) => t + x + y + ';' });
db.aggregate('gv', { varargs: true, start: 1, step: (t, ...xs) => t * xs.length });
db.aggregate('gw', { start: 0, step: (t, x) => t + x, inverse: (t, x) => t - x, result: (t) => t * 10 });
db.exec('CREATE TABLE n (x); INSERT INTO n VALUES (1), (2), (3), (4)');
out.push(db.prepare("SELECT g0() AS a, g1(x) AS b, g2(x, 'k') AS c, gv(x, x, 'q') AS d FROM n").get());
out.push(db.prepare('SELECT gw(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS w FROM n').pluck().all());
s.close();
// Times and generated ids differ between runs: keep keys, types and the rest of the values.
const varying = /_ms$|^(id|lease_id|trace_id|correlation_id|db_path)$/;
const clean = (v) => JSON.stringify(v, (k, x) => (varying.test(k) ? typeof x : x));
console.log(out.map(clean).join('\\n'));
`;

function run(dir, name, flags) {
  const child = spawnSync(process.execPath, [...flags, '-e', SCRIPT, join(dir, name)], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout;
}

test('rows, bound values and user functions are the same without run-time code generation', (t) => {
  const dir = tempDir(t);
  const generated = run(dir, 'a.db', []);
  const without = run(dir, 'b.db', ['--disallow-code-generation-from-strings']);
  assert.equal(without, generated);
  // The script really reached every call (a row per line, none of them empty).
  assert.equal(generated.trim().split('\n').length, 20);
  assert.match(generated, /"agent_id":"a1"/);
  // better-sqlite3 defines a `__proto__` column as an own property on Node 22+ and
  // assigns it (Object.prototype's setter drops a string) on older Nodes.
  const row = Number(process.versions.modules) >= 127 ? '{"__proto__":"p","a b":2,"":"e"}' : '{"a b":2,"":"e"}';
  assert.ok(generated.includes(`\n${row}\n[${row}]\n`), generated);
  const laned = Number(process.versions.modules) >= 127 ? '{"__proto__":1,"a b":2.5}' : '{"a b":2.5}';
  const held = Number(process.versions.modules) >= 127 ? '{"__proto__":"p","a b":2.5}' : '{"a b":2.5}';
  assert.ok(
    generated.endsWith(`\n{"a":1,"b":2.5}\n[1,2.5]\n"a,1,b,2"\n${laned}\n{"a":1,"b":"x","c":2.5}\n[null,2]\n${held}\n` +
      '{"a":"zero","b":42,"c":"x-2.5","d":"1|y|","e":12,"f":"1+z+3.5"}\n' +
      '{"a":"nnnn","b":10,"c":"1k;2k;3k;4k;","d":81}\n[10,30,50,70]\n'),
    generated,
  );
});

test('each user function and aggregate runs from trampolines compiled for it alone', () => {
  const Database = require('../better-sqlite3.cjs');
  const db = new Database(':memory:');
  const thrown = (sql) => assert.throws(() => db.prepare(sql).all(), (error) => {
    // A copy's frames name the eval that made them; the shared factory's name its file.
    assert.match(error.stack, /eval at callCompiledApart/);
    return true;
  });
  db.function('boom', (x) => { throw new Error(String(x)); });
  db.aggregate('stepBoom', { start: 0, step: (t, x) => { throw new Error(String(x)); } });
  db.aggregate('inverseBoom', { start: 0, step: (t, x) => t + x, inverse: () => { throw new Error('inverse'); } });
  db.aggregate('resultBoom', { start: 0, step: (t, x) => t + x, result: () => { throw new Error('result'); } });
  thrown('SELECT boom(1)');
  thrown('SELECT stepBoom(x) FROM (SELECT 1 AS x)');
  thrown('SELECT inverseBoom(x) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3)');
  thrown('SELECT resultBoom(x) FROM (SELECT 1 AS x)');
  db.close();
});
