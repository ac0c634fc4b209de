// The soak of bench/scale.mjs (--soak SECONDS): a busy hub's calls for a while, from an
// empty file, timing the statistics as the log grows under them. Per iteration: an
// auditLog (4 in 10 to recipients nobody serves: they stay queued; the rest delivered,
// half of those then acked), and every 10th iteration an assign job created and earlier
// ones moved on (some stay queued or running), a getAuditMessagesForAgent, then getHubStats,
// getQueueDepths and getAuditStats, each timed. The report is per window: the log's size,
// how much of it is queued, the median time per call of each statistic and the share of
// the wall time they took. Per-call time should not grow with the log.

import { agentId } from './scale-data.mjs';
import { median } from './stats.mjs';

export const SOAK_STATS = ['getHubStats', 'getQueueDepths', 'getAuditStats'];

/**
 * Runs the loop on `store` (this package's, or the baseline's with the original's
 * statistics in `stats` and its status update in `setStatus`) for `seconds`; returns one
 * record per `windowSeconds`.
 */
export function soak({ store, stats, setStatus, seconds, windowSeconds }) {
  const end = performance.now() + seconds * 1000;
  const windows = [];
  let win = { start: performance.now(), us: Object.fromEntries(SOAK_STATS.map((m) => [m, []])), statsMs: 0 };
  const jobs = [];
  let hub = null;
  let messages = 0;
  for (let i = 0; ; i++) {
    const stays = i % 10 < 4;
    const to = stays ? `absent-${i % 7}` : agentId(i % 100);
    const { id } = store.auditLog({ type: 'event', from: agentId((i + 1) % 100), to, topic: 'soak', priority: 1 + (i % 9), ttl_ms: 3_600_000, payload: { i } });
    messages += 1;
    if (!stays) {
      setStatus(id, 'delivered');
      if (i % 2) setStatus(id, 'acked');
    }
    if (i % 10 !== 9) continue;
    const k = jobs.length;
    jobs.push(store.createAssign({ supervisor_agent: agentId(0), worker_agent: agentId(1 + (k % 20)), task: `t${k}` }).job_id);
    if (k >= 1 && k % 4 !== 1) store.updateAssignStatus(jobs[k - 1], 'running');
    if (k >= 2 && k % 4 !== 2 && k % 4 !== 1) store.updateAssignStatus(jobs[k - 2], k % 9 === 0 ? 'failed' : 'succeeded');
    store.getAuditMessagesForAgent(agentId(i % 100), { max_messages: 20 });
    const t0 = performance.now();
    for (const m of SOAK_STATS) {
      const s = performance.now();
      const result = stats[m]();
      if (m === 'getHubStats') hub = result;
      win.us[m].push((performance.now() - s) * 1000);
    }
    const t1 = performance.now();
    win.statsMs += t1 - t0;
    if (t1 - win.start >= windowSeconds * 1000 || t1 >= end) {
      windows.push({
        seconds: (t1 - end) / 1000 + seconds,
        messages: hub.total_messages,
        queued: hub.urgent + hub.normal,
        activeJobs: hub.active_assign_jobs,
        us: Object.fromEntries(SOAK_STATS.map((m) => [m, win.us[m].length ? median(win.us[m]) : null])),
        share: win.statsMs / (t1 - win.start),
      });
      if (t1 >= end) break;
      win = { start: t1, us: Object.fromEntries(SOAK_STATS.map((m) => [m, []])), statsMs: 0 };
    }
  }
  return windows;
}

/**
 * The first window that started with the log past `threshold` messages: the windows
 * before hold the small log's start, where this package runs the original's statements.
 */
export const firstLargeWindow = (windows, threshold) => windows.findIndex((w, i) => i > 0 && windows[i - 1].messages >= threshold);

/** The report of one side's windows, and the growth from window `from` (if any) to the last. */
export function soakReport(label, windows, fmt, from) {
  const rows = [['t', 'messages', 'queued', 'active jobs', ...SOAK_STATS, 'share of time']];
  for (const w of windows) {
    rows.push([`${w.seconds.toFixed(0)} s`, w.messages, `${w.queued} (${((100 * w.queued) / w.messages).toFixed(0)}%)`, w.activeJobs,
      ...SOAK_STATS.map((m) => fmt(w.us[m])), `${(100 * w.share).toFixed(1)}%`]);
  }
  const first = windows[from];
  const last = windows[windows.length - 1];
  if (first && first !== last) {
    rows.push([`growth ${first.seconds.toFixed(0)}→${last.seconds.toFixed(0)} s`, '', '', '',
      ...SOAK_STATS.map((m) => `×${(last.us[m] / first.us[m]).toFixed(2)}`), '']);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return `${label}\n${rows.map((r) => r.map((c, i) => String(c).padStart(widths[i])).join('  ')).join('\n')}`;
}
