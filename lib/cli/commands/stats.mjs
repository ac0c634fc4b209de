// `triflux-store stats <db>`: the store's own getHubStats, getAuditStats, getQueueDepths
// and getDeliveryStats, through the package's readStats: the store's methods (the code a
// hub runs) on a read-only connection that never migrates the file, all four in one read
// transaction, so they describe one state of the file while the hub writes.

import { readStats } from 'triflux-native-store';

import { openHub, requireTables, sqlite } from '../open.mjs';
import { pairs, printJson, println } from '../util.mjs';

export function collectStats(path, options, io) {
  const { db, version, immutable } = openHub(path, options, io);
  try {
    requireTables(db, path, version, ['agents', 'messages', 'dead_letters', 'assign_jobs']);
  } finally {
    db.close();
  }
  return sqlite(path, () => readStats(path, { timeout: options.busyTimeout, immutable }));
}

export function run({ args, options, io }) {
  const stats = collectStats(args[0], options, io);
  if (options.json) {
    printJson(io.stdout, stats);
    return 0;
  }
  const sections = [
    ['getHubStats', stats.hub],
    ['getAuditStats', stats.audit],
    ['getQueueDepths', stats.queue_depths],
    ['getDeliveryStats', stats.delivery],
  ];
  println(
    io.stdout,
    sections.map(([title, values]) => `${title}\n${pairs(Object.entries(values).map(([k, v]) => [`  ${k}`, String(v)]))}`).join('\n\n'),
  );
  return 0;
}
