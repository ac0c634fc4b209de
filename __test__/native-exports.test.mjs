// The glue reads the binding's functions as `native.x` on every statement call; that
// object must keep V8's fast properties (a dictionary makes each read a hash lookup).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import test from 'node:test';

const require = createRequire(import.meta.url);

test('the loaded binding\'s exports object keeps fast properties', () => {
  const script = `
    const native = require(${JSON.stringify(require.resolve('../lib/native.cjs'))});
    native.load();
    console.log(typeof native.facadeGet, typeof native.storeRun, %HasFastProperties(native));
  `;
  const child = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), 'function function true');
});

test('the binary of `npm run build` exports no benchmark recorder (`npm run build:bench` builds one that does)', () => {
  const native = require('../lib/native.cjs');
  native.load();
  const recorder = Object.keys(native).filter((key) => key.startsWith('benchFloor'));
  assert.deepEqual(recorder, [], 'a binary built with the bench-floor feature: run `npm run build` before the tests');
});
