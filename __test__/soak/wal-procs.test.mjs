// Soak (npm run test:soak:wal, not part of npm test: it takes 30 s): four processes, each a
// store on one file, write, read and compare-and-set one role for 30 s. The WAL stays under
// the checkpointer's bound (64 MiB), no call fails and every acknowledged write is in the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { repoRoot } from '../helpers.mjs';

test('four processes on one file for 30 s: WAL under 64 MiB, 0 errors, 0 lost writes, integrity ok', { timeout: 180_000 }, () => {
  const seconds = process.env.TRIFLUX_SOAK_SECONDS ?? '30';
  const r = spawnSync(process.execPath, [join(repoRoot, 'bench', 'writes.mjs'), '--procs', '4', '--seconds', seconds, '--side', 'addon', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [run] = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.ok(run.acks > 1000, `acknowledged writes: ${run.acks}`);
  assert.equal(run.errors, 0, run.firstError);
  assert.equal(run.lost, 0);
  assert.equal(run.integrity, 'ok');
  assert.ok(run.walPeak < 64 * 1024 * 1024, `WAL peak ${run.walPeak}`);
});
