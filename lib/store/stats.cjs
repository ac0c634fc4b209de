'use strict';
// Sweeps and statistics. getQueueDepths, getHubStats and getAuditStats are one native
// statement each (one read transaction; on a large log their counts come from the
// connection's counters, see src/store/scale.rs).

const native = require('../native.cjs');
const { TxKind, decode } = require('../protocol.cjs');
const { transaction } = require('./statements.cjs');

function statsMethods({ S, n }) {
  const h = n.handle;
  return {
    // IMMEDIATE where the original was DEFERRED: this reads before it writes, and a
    // deferred transaction then fails with SQLITE_BUSY_SNAPSHOT when another process
    // wrote in between; the immediate one waits under busy_timeout instead.
    sweepExpired() {
      const now = Date.now();
      return transaction(n, TxKind.IMMEDIATE, () => {
        const expired = S.findExpired.all(now);
        for (const { id } of expired) {
          S.setMsgStatus.run('dead_letter', id);
          S.insertDL.run(id, 'ttl_expired', now, null);
        }
        const humanRequests = S.expireHR.run(now).changes;
        return { messages: expired.length, human_requests: humanRequests };
      });
    },

    getQueueDepths() {
      return decode(native.storeQueueDepths(h));
    },

    getDeliveryStats() {
      return { total_deliveries: S.ackedRecent.get(Date.now()).cnt, avg_delivery_ms: 0 };
    },

    getHubStats() {
      return decode(native.storeHubStats(h));
    },

    getAuditStats() {
      return decode(native.storeAuditStats(h));
    },
  };
}

module.exports = { statsMethods };
