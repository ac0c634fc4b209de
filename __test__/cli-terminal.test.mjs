// Text an agent wrote into the hub's file, or an argument, never reaches the operator's
// terminal raw: every human-readable output of triflux-store shows control characters
// escaped (no escape sequence runs, no field starts a fake line, columns stay aligned),
// while --json gives the same strings back exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { createStore } from '../index.mjs';
import { assertOneLineError, cli } from './cli-helpers.mjs';
import { fixtureCopy, tempDir } from './helpers.mjs';

// Colours, a window title set with OSC ... BEL, a screen clear, an OSC 52 clipboard write,
// a C1 CSI, a carriage return and a newline that would start a line of its own.
const AGENT = 'evil\x1b[31mRED\x1b]0;pwned\x07';
const FROM = 'evil\x1b[2J';
const TOPIC = 't\x1b[31m';
const HOLDER = 'holder\x1b]52;c;cHduZWQ=\x07\u009b2J\r\nFAKE holder line';
const TABLE = 'x\x1b]0;pwned\x07\nFAKE table line';
const PAYLOAD = { text: 'pay\x1b[2Jload\u009d0;t\x07' };

/** Any character a terminal acts on: C0 but tab and newline, DEL, C1 (decoded: UTF-8 text has 0x80-0x9f bytes in ordinary characters). */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

function assertSafe(text, label) {
  const hit = RAW.exec(text);
  assert.equal(hit, null, `${label}: raw U+${hit?.[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`);
  assert.ok(!text.split('\n').some((l) => l.startsWith('FAKE')), `${label}: a field started a line of its own`);
}

/** A hub file with the hostile names in every place the commands show: agents, messages, roles, a table. */
function hostileHub(t) {
  const path = fixtureCopy(t, 'hub-v6.db');
  const store = createStore(path);
  try {
    store.registerAgent({ agent_id: AGENT, cli: 'codex', topics: [TOPIC], heartbeat_ttl_ms: 60000 });
    store.auditLog({ type: 'event', from: FROM, to: AGENT, topic: TOPIC, priority: 5, ttl_ms: 60000, payload: PAYLOAD });
    const wire = store.db.prepare('SELECT role_key_wire FROM role_registry WHERE holder_agent_id IS NOT NULL ORDER BY role_key_wire LIMIT 1').pluck().get();
    assert.ok(wire, 'the fixture has a held role');
    store.db.prepare('UPDATE role_registry SET holder_agent_id = ? WHERE role_key_wire = ?').run(HOLDER, wire);
    // An extra table (a note of check) whose row breaks its foreign key (a finding).
    const quoted = `"${TABLE.replace(/"/g, '""')}"`;
    store.db.pragma('foreign_keys = OFF');
    store.db.exec(`CREATE TABLE ${quoted} (agent TEXT REFERENCES agents(agent_id)); INSERT INTO ${quoted} VALUES ('${FROM}')`);
  } finally {
    store.close();
  }
  return path;
}

async function run(args, label, { status = 0 } = {}) {
  const r = await cli(args);
  assert.equal(r.status, status, `${label}: exit code (stderr: ${r.stderr})`);
  assertSafe(r.stdout, `${label} stdout`);
  assertSafe(r.stderr, `${label} stderr`);
  return r;
}

test('agents, roles, tail, stats, check, info, backup: hostile text from the file is shown escaped, never emitted', async (t) => {
  const db = hostileHub(t);
  const agents = await run(['agents', db], 'agents');
  assert.ok(agents.stdout.includes('evil\\x1b[31mRED\\x1b]0;pwned\\x07'), agents.stdout);
  assert.ok(agents.stdout.includes('t\\x1b[31m'), 'the topic column');
  // Widths count the escaped form: the hostile row's cli value starts under the header's.
  const [header, ...rows] = agents.stdout.split('\n');
  const evil = rows.find((l) => l.startsWith('evil\\x1b'));
  assert.equal(evil.indexOf(' codex ') + 1, header.indexOf('cli'), `aligned:\n${header}\n${evil}`);

  const roles = await run(['roles', db], 'roles');
  assert.ok(roles.stdout.includes('holder\\x1b]52;c;cHduZWQ=\\x07\\x9b2J\\r\\nFAKE holder line'), roles.stdout);

  const tail = await run(['tail', db, '--once', '-n', '5'], 'tail');
  const line = tail.stdout.split('\n').find((l) => l.includes('evil\\x1b[2J -> evil\\x1b[31mRED'));
  assert.ok(line, tail.stdout);
  // The payload is JSON text: ESC is a JSON escape in it already, the C1 OSC is shown escaped.
  assert.ok(line.includes('[t\\x1b[31m]') && line.includes('pay\\u001b[2Jload\\x9d0;t\\u0007'), line);
  // The filter takes the raw topic as an argument and shows the same escaped line.
  const filtered = await run(['tail', db, '--once', '--topic', TOPIC, '--agent', FROM], 'tail filtered');
  assert.deepEqual(filtered.stdout.trim().split('\n'), [line]);

  const stats = await run(['stats', db], 'stats');
  assert.match(stats.stdout, /^getHubStats$/m);

  // The hostile table's name in info's row counts and in backup's summary of the copy.
  const info = await run(['info', db], 'info');
  assert.match(info.stdout, /^x\\x1b\]0;pwned\\x07\\nFAKE table line +1$/m);
  // Windows file names cannot hold control characters: there the copy's name is plain.
  const name = process.platform === 'win32' ? 'copy.db' : 'copy\x1b[2J.db';
  const backup = await run(['backup', db, join(tempDir(t), name)], 'backup');
  assert.ok(backup.stdout.includes(`${name.replace('\x1b', '\\x1b')} (online backup)`), backup.stdout);
  assert.ok(backup.stdout.includes(', x\\x1b]0;pwned\\x07\\nFAKE table line 1'), backup.stdout);

  const check = await run(['check', db], 'check', { status: 1 });
  assert.ok(check.stdout.includes('x\\x1b]0;pwned\\x07\\nFAKE table line row 1 refers to a missing agents row'), check.stdout);
  assert.ok(check.stdout.includes('note: table x\\x1b]0;pwned\\x07\\nFAKE table line is not part'), check.stdout);
});

test('--json gives the hostile strings back exactly, as JSON escapes only', async (t) => {
  const db = hostileHub(t);
  const agents = JSON.parse((await run(['agents', db, '--json'], 'agents --json')).stdout);
  const agent = agents.agents.find((a) => a.agent_id === AGENT);
  assert.ok(agent, 'the agent id round-trips');
  assert.deepEqual(agent.topics, [TOPIC]);

  const roles = JSON.parse((await run(['roles', db, '--json'], 'roles --json')).stdout);
  assert.equal(roles.roles.filter((r) => r.holder_agent_id === HOLDER).length, 1);

  const tail = await run(['tail', db, '--once', '--json', '--topic', TOPIC], 'tail --json');
  const rows = tail.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.length, 1);
  assert.equal(rows[0].from_agent, FROM);
  assert.equal(rows[0].to_agent, AGENT);
  assert.equal(rows[0].topic, TOPIC);
  assert.deepEqual(JSON.parse(rows[0].payload_json), PAYLOAD);

  const stats = JSON.parse((await run(['stats', db, '--json'], 'stats --json')).stdout);
  assert.ok(stats.hub.online_agents >= 1);

  const check = JSON.parse((await run(['check', db, '--json'], 'check --json', { status: 1 })).stdout);
  assert.ok(check.findings.some((f) => f.name === `${TABLE}#1`), JSON.stringify(check.findings));
  assert.ok(check.notes.some((n) => n.name === TABLE));
});

test('errors quoting a hostile path, argument or command stay one escaped line', async (t) => {
  const dir = tempDir(t);
  const gone = join(dir, 'gone\x1b]0;pwned\x07\nFAKE error line.db');
  for (const command of ['agents', 'roles', 'tail', 'stats', 'check', 'info']) {
    const r = await run([command, gone], `${command} on a hostile path`, { status: 2 });
    // The quoted path, escaped ("no such file" here; Windows may refuse such a name otherwise).
    assertOneLineError(r, /gone\\x1b\]0;pwned\\x07\\nFAKE error line\.db: /, command);
  }
  const db = fixtureCopy(t, 'hub-v6.db');
  assertOneLineError(await run(['agents', db, '--now', '1\x1b[2J'], 'a hostile option value', { status: 2 }), /--now expects .* got "1\\x1b\[2J"/, 'option');
  assertOneLineError(await run(['\x1b[2Jnope'], 'a hostile command', { status: 2 }), /unknown command "\\x1b\[2Jnope"/, 'command');
  assertOneLineError(await run(['backup', db, join(dir, 'x\x1b[2J', 'copy.db')], 'a hostile destination', { status: 2 }), /x\\x1b\[2J.*directory does not exist/, 'backup');
});
