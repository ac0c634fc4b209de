// `triflux-store tail <db>`: the last audit messages, then new ones as they arrive (like
// `tail -f`). Every poll is one autocommit SELECT, so no read transaction is held
// between polls and the hub's checkpoints are never blocked by this command.

import { setTimeout as sleep } from 'node:timers/promises';

import { openHub, openReadOnly, requireTables, sqlite } from '../open.mjs';
import { intOption, iso, jsonText, println, visible } from '../util.mjs';

const CHUNK = 1000;
const PAYLOAD_WIDTH = 160;

function matcher({ agent = [], topic = [], type = [] }) {
  return (row) =>
    (agent.length === 0 || agent.includes(row.from_agent) || agent.includes(row.to_agent)) &&
    (topic.length === 0 || topic.includes(row.topic)) &&
    (type.length === 0 || type.includes(row.type));
}

/** The same filter as SQL, for the initial look back (which may scan the whole table). */
function whereClause({ agent = [], topic = [], type = [] }) {
  const clauses = [];
  const params = [];
  const list = (values) => values.map(() => '?').join(',');
  if (agent.length > 0) {
    clauses.push(`(from_agent IN (${list(agent)}) OR to_agent IN (${list(agent)}))`);
    params.push(...agent, ...agent);
  }
  if (topic.length > 0) {
    clauses.push(`topic IN (${list(topic)})`);
    params.push(...topic);
  }
  if (type.length > 0) {
    clauses.push(`type IN (${list(type)})`);
    params.push(...type);
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

function publicRow(row) {
  const { _rowid, ...rest } = row;
  void _rowid;
  return rest;
}

/** One message on one line: every field escaped (an agent cannot end the line or fake another). */
function line(row) {
  const payload = visible(row.payload_json ?? '');
  const shown = payload.length > PAYLOAD_WIDTH ? `${payload.slice(0, PAYLOAD_WIDTH - 1)}…` : payload;
  const [type, from, to, topic, priority, status] = [row.type, row.from_agent, row.to_agent, row.topic, row.priority, row.status].map(visible);
  return `${iso(row.created_at_ms)}  ${type.padEnd(8)}  ${from} -> ${to}  [${topic}] p${priority} ${status}  ${shown}`;
}

export async function run({ args, options, io }) {
  const path = args[0];
  const lines = intOption(options.lines, 'lines') ?? 10;
  const interval = intOption(options.interval, 'interval', { min: 10 }) ?? 500;
  const limit = intOption(options.limit, 'limit', { min: 1 });
  const timeout = intOption(options.timeout, 'timeout');
  const filter = { agent: options.agent, topic: options.topic, type: options.type };
  const matches = matcher(filter);
  const print = (row) => println(io.stdout, options.json ? jsonText(publicRow(row)) : line(row));

  let { db, version, immutable } = openHub(path, options, io);
  let stop = false;
  const onSignal = () => {
    stop = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    requireTables(db, path, version, ['messages']);
    const { sql, params } = whereClause(filter);
    // The starting point first, then the look back up to it: nothing is missed or shown twice.
    let last = sqlite(path, () => db.prepare('SELECT MAX(rowid) FROM messages').pluck().get()) ?? 0;
    const where = sql ? `${sql} AND rowid <= ?` : 'WHERE rowid <= ?';
    const recent =
      lines === 0
        ? []
        : sqlite(path, () =>
            db.prepare(`SELECT rowid AS _rowid, * FROM messages ${where} ORDER BY rowid DESC LIMIT ?`).all(...params, last, lines),
          );
    for (const row of recent.reverse()) print(row);
    if (options.once) return 0;

    const NEXT = `SELECT rowid AS _rowid, * FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ${CHUNK}`;
    let next = sqlite(path, () => db.prepare(NEXT));
    const deadline = timeout === undefined ? Infinity : Date.now() + timeout;
    let shown = 0;
    while (!stop && Date.now() < deadline) {
      if (immutable) {
        // An immutable connection never sees a change: each poll opens the file anew,
        // with shared locks again as soon as that works (a hub that starts writing it).
        db.close();
        ({ db, immutable } = openReadOnly(path, { busyTimeout: options.busyTimeout, quiet: true }));
        next = sqlite(path, () => db.prepare(NEXT));
      }
      const rows = sqlite(path, () => next.all(last));
      for (const row of rows) {
        last = row._rowid;
        if (!matches(row)) continue;
        print(row);
        shown += 1;
        if (limit !== undefined && shown >= limit) return 0;
      }
      if (rows.length === CHUNK) continue;
      await sleep(Math.max(0, Math.min(interval, deadline - Date.now())));
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    db.close();
  }
}
