// `triflux-store stats <db>`: the store's own getHubStats, getAuditStats, getQueueDepths
// and getDeliveryStats. They are the store's native methods (the same Rust code a hub
// runs), called on a READ-ONLY connection that never ran the store's open-time steps:
// `createStore` would set PRAGMAs, create tables and migrate the file, and the four
// methods are plain SELECT COUNT(*)s that need none of that.

import { createRequire } from 'node:module';

import { openHub, requireTables, sqlite } from '../open.mjs';
import { pairs, printJson, println } from '../util.mjs';

const require = createRequire(import.meta.url);
const native = require('../../native.cjs');
const { decode } = require('../../protocol.cjs');

export function collectStats(path, options) {
  const { db, version } = openHub(path, options);
  try {
    requireTables(db, path, version, ['agents', 'messages', 'dead_letters', 'assign_jobs']);
  } finally {
    db.close();
  }
  return sqlite(path, () => {
    const n = new native.NativeDb(path, { readonly: true, fileMustExist: true, timeout: options.timeout });
    try {
      return {
        hub: decode(native.storeHubStats(n.handle)),
        audit: decode(native.storeAuditStats(n.handle)),
        queue_depths: decode(native.storeQueueDepths(n.handle)),
        delivery: {
          total_deliveries: decode(native.storeGet(n.handle, native.storeStatements().findIndex((s) => s.name === 'ackedRecent'), [Date.now()])).cnt,
          avg_delivery_ms: 0,
        },
      };
    } finally {
      n.close();
    }
  });
}

export function run({ args, options, io }) {
  const stats = collectStats(args[0], options);
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
