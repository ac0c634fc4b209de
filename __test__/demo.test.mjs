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
  assert.match(first, /-> succeeded/);
  assert.match(first, /CTO role: elected-probing \(epoch 0\)/);
  assert.match(first, /"total_messages":3/);
  const second = run();
  assert.match(second, /CTO role: elected-probing \(epoch 1\)/);
  assert.match(second, /"total_messages":6/);
});
