// `npm start` runs demo/demo.mjs; it must work on a fresh database and again on the
// same file (data from the first run is kept).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { repoRoot, tempDir } from './helpers.mjs';

test('the demo runs twice on one database file and keeps its data', (t) => {
  const db = join(tempDir(t), 'nested', 'demo.db');
  const run = () => execFileSync(process.execPath, [join(repoRoot, 'demo', 'demo.mjs'), db], { encoding: 'utf8' });
  const first = run();
  assert.match(first, /replay for demo-worker: .*request:build/);
  const jobs = [...first.matchAll(/^assign (\S+) -> (\w+)$/gm)];
  assert.deepEqual(jobs.map((m) => m[2]), ['queued', 'running', 'succeeded']);
  assert.match(jobs[0][1], /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'the whole job id');
  assert.equal(first.trimEnd().split('\n').at(-1).split('   ')[0], `look into the file: npx triflux-store info ${db}`);
  assert.match(first, /CTO role: elected-probing \(epoch 0\)/);
  assert.match(first, /"total_messages":3/);
  const second = run();
  assert.match(second, /CTO role: elected-probing \(epoch 1\)/);
  assert.match(second, /"total_messages":6/);
  assert.notEqual(second.match(/^assign (\S+)/m)[1], jobs[0][1], 'another job, another id');
});
