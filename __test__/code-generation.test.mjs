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
  assert.equal(generated.trim().split('\n').length, 18);
  assert.match(generated, /"agent_id":"a1"/);
  // better-sqlite3 defines a `__proto__` column as an own property on Node 22+ and
  // assigns it (Object.prototype's setter drops a string) on older Nodes.
  const row = Number(process.versions.modules) >= 127 ? '{"__proto__":"p","a b":2,"":"e"}' : '{"a b":2,"":"e"}';
  assert.ok(generated.includes(`\n${row}\n[${row}]\n`), generated);
  const laned = Number(process.versions.modules) >= 127 ? '{"__proto__":1,"a b":2.5}' : '{"a b":2.5}';
  const held = Number(process.versions.modules) >= 127 ? '{"__proto__":"p","a b":2.5}' : '{"a b":2.5}';
  assert.ok(
    generated.endsWith(`\n{"a":1,"b":2.5}\n[1,2.5]\n"a,1,b,2"\n${laned}\n{"a":1,"b":"x","c":2.5}\n[null,2]\n${held}\n` +
      '{"a":"zero","b":42,"c":"x-2.5","d":"1|y|","e":12,"f":"1+z+3.5"}\n'),
    generated,
  );
});
