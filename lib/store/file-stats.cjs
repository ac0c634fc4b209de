'use strict';
// readStats(filename): the store's four statistics of a hub file, for tools that look at
// a hub's database from outside (triflux-store stats). They are the store's own methods
// (store/stats.cjs, the code a hub runs), on a read-only connection that never runs the
// store's open-time steps (createStore would set PRAGMAs and migrate the file), all four
// in one read transaction, so they describe one state of the file even while the hub
// writes.

const native = require('../native.cjs');
const { TxKind } = require('../protocol.cjs');
const { storeStatements, transaction } = require('./statements.cjs');
const { statsMethods } = require('./stats.cjs');

// The statistics' statements are the same in every schema version.
const STATS_VERSION = 6;

function readStats(filename, options) {
  native.load();
  if (typeof filename !== 'string') throw new TypeError('Expected first argument to be a string');
  if (options == null) options = {};
  if (typeof options !== 'object') throw new TypeError('Expected second argument to be an options object');
  const { timeout = 5000, immutable = false } = options;
  if (!Number.isInteger(timeout) || timeout < 0) throw new TypeError('Expected the "timeout" option to be a positive integer');
  if (typeof immutable !== 'boolean') throw new TypeError('Expected the "immutable" option to be a boolean');
  const n = native.connect(filename, { readonly: true, fileMustExist: true, timeout, immutable });
  try {
    const stats = statsMethods({ S: storeStatements(n.handle, STATS_VERSION), n });
    return transaction(n, TxKind.DEFERRED, () => ({
      hub: stats.getHubStats(),
      audit: stats.getAuditStats(),
      queue_depths: stats.getQueueDepths(),
      delivery: stats.getDeliveryStats(),
    }));
  } finally {
    n.close();
  }
}

module.exports = { readStats };
