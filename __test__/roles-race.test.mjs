// Two REAL processes on one database file race reservations and compare-and-set on
// the same role key. Each round exactly one write wins; the loser sees stale_version
// (its guard is one version behind), and SQLITE_BUSY never escapes: the store waits
// (busy_timeout 5000) and reservations take the write lock up front (BEGIN IMMEDIATE).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { once } from 'node:events';

import { createStore } from '../index.mjs';
import { repoRoot, tempDir } from './helpers.mjs';

const PRJ = 'prj_' + 'R'.repeat(22);
const WIRE = 'rk2.' + Buffer.from(`{"project_id":"${PRJ}","role_kind":"cto"}`).toString('base64url');
const ROUNDS_PER_KIND = 20;
const PLANS = [
  ['reserve', 'cas'],
  ['cas', 'reserve'],
  ['reserve', 'reserve'],
  ['cas', 'cas'],
];

function spawnRacer(dbPath, name) {
  const child = fork(join(repoRoot, '__test__', 'fixtures', 'role-racer.mjs'), [dbPath, name], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const replies = [];
  let waiter = null;
  child.on('message', (m) => {
    replies.push(m);
    if (waiter) waiter();
  });
  const next = async () => {
    while (replies.length === 0) await new Promise((resolve) => (waiter = resolve));
    waiter = null;
    return replies.shift();
  };
  return { child, next };
}

test('two processes race reservations and CAS on one role: one winner per round, no SQLITE_BUSY', { timeout: 120000 }, async (t) => {
  const dbPath = join(tempDir(t), 'race.db');
  const store = createStore(dbPath);
  t.after(() => store.close());
  store.upsertRoleReservation({ role_key_wire: WIRE });

  const racers = [spawnRacer(dbPath, 'A'), spawnRacer(dbPath, 'B')];
  t.after(() => racers.forEach((r) => r.child.connected && r.child.kill()));
  for (const r of racers) assert.ok((await r.next()).ready);

  const stats = { rounds: 0, wins: { A: 0, B: 0 }, winsByOp: { reserve: 0, cas: 0 }, loserReasons: {}, errors: [], maxMicros: 0 };
  let round = 0;
  for (const plan of PLANS) {
    for (let i = 0; i < ROUNDS_PER_KIND; i += 1) {
      round += 1;
      const role = store.getRole(WIRE);
      const guard = {
        role_key_wire: WIRE,
        expected_version: role.version,
        expected_epoch: role.epoch,
        expected_activation_seq: role.activation_seq,
        expected_activation_id: role.activation_id,
      };
      const startAt = Date.now() + 25;
      racers.forEach((r, k) => r.child.send({ round, op: plan[k], guard, startAt }));
      const replies = await Promise.all(racers.map((r) => r.next()));
      for (const reply of replies) {
        assert.equal(reply.round, round);
        stats.maxMicros = Math.max(stats.maxMicros, reply.micros);
        if (reply.error) stats.errors.push(reply.error);
      }
      assert.deepEqual(stats.errors, [], 'no error (SQLITE_BUSY or other) may escape');
      const winners = replies.filter((r) => r.ok);
      const losers = replies.filter((r) => !r.ok);
      assert.equal(winners.length, 1, `round ${round}: exactly one winner (${JSON.stringify(replies)})`);
      assert.equal(losers[0].reason, 'stale_version', `round ${round}: loser reason`);
      assert.equal(winners[0].version, role.version + 1);
      stats.rounds += 1;
      stats.wins[winners[0].name] += 1;
      stats.winsByOp[winners[0].op] += 1;
      stats.loserReasons[losers[0].reason] = (stats.loserReasons[losers[0].reason] ?? 0) + 1;
      const after = store.getRole(WIRE);
      assert.equal(after.version, role.version + 1);
      assert.equal(after.holder_agent_id, winners[0].name);
    }
  }
  for (const r of racers) {
    r.child.send({ type: 'stop' });
    await once(r.child, 'exit');
  }
  assert.equal(store.getRole(WIRE).version, PLANS.length * ROUNDS_PER_KIND);
  t.diagnostic(`race stats: ${JSON.stringify(stats)}`);
});
