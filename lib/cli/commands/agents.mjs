// `triflux-store agents <db>`: every agent with its status and how long its lease has left,
// and from schema 7 on its presence generation (the one its heartbeats must name).

import { openHub, requireTables, sqlite } from '../open.mjs';
import { duration, intOption, iso, leaseLeft, printListing } from '../util.mjs';

function parseList(text) {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

export function run({ args, options, io }) {
  const path = args[0];
  const now = intOption(options.now, 'now') ?? Date.now();
  const { db, version } = openHub(path, options, io);
  let rows;
  try {
    requireTables(db, path, version, ['agents']);
    // The same rows and order as the store's listAllAgents().
    rows = sqlite(path, () => db.prepare('SELECT * FROM agents').all());
  } finally {
    db.close();
  }
  const agents = rows.map((row) => ({
    agent_id: row.agent_id,
    cli: row.cli,
    pid: row.pid,
    status: row.status,
    last_seen_ms: row.last_seen_ms,
    lease_expires_ms: row.lease_expires_ms,
    lease_left_ms: row.lease_expires_ms - now,
    lease_expired: row.lease_expires_ms <= now,
    topics: parseList(row.topics_json),
    project_id: row.project_id ?? null,
    session_id: row.session_id ?? null,
    host_id: row.host_id ?? null,
    presence_generation: row.presence_generation ?? null,
  }));
  const generations = rows.length > 0 && 'presence_generation' in rows[0];
  return printListing(io, options, {
    key: 'agents',
    rows: agents,
    now,
    columns: [
      ['agent', 'agent_id'],
      ['cli', 'cli'],
      ['pid', 'pid'],
      ['status', 'status'],
      ...(generations ? [['gen', 'presence_generation']] : []),
      ['lease left', (a) => leaseLeft(a.lease_expires_ms, now)],
      ['last seen', (a) => `${iso(a.last_seen_ms)} (${duration(now - a.last_seen_ms)} ago)`],
      ['topics', (a) => a.topics.join(',') || '-'],
    ],
    summary: () => {
      const online = agents.filter((a) => a.status === 'online');
      const lapsed = online.filter((a) => a.lease_expired).length;
      return `${agents.length} agents, ${online.length} online${lapsed ? ` (${lapsed} with an expired lease: the hub's next sweep marks them stale)` : ''}`;
    },
  });
}
