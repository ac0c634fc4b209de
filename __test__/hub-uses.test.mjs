// The hub's four uses of `store.db`, reproduced against a real createStore() store:
// store-adapter's adaptive_rules table, hitl's transaction around store methods,
// pipeline/state.mjs (statements cached in a WeakMap keyed by the db object), and
// session-fingerprint's `_meta` keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { createStore, SqliteError } from '../index.mjs';
import { tempDir } from './helpers.mjs';

const require = createRequire(import.meta.url);

function openStore(t, viaRequire = false) {
  const create = viaRequire ? require('../index.cjs').createStore : createStore;
  const path = join(tempDir(t), 'nested', 'dir', 'hub.db');
  const store = create(path);
  t.after(() => store.close());
  return { store, path };
}

// --- store-adapter: adaptive rules (v1 table, then the v2 columns) ---
function ensureAdaptiveRules(db) {
  const version = db.prepare('SELECT value FROM _meta WHERE key = ?').pluck().get('adaptive_rules_schema_version');
  db.exec(`
    CREATE TABLE IF NOT EXISTS adaptive_rules (
      project_slug TEXT NOT NULL,
      pattern TEXT NOT NULL,
      confidence REAL NOT NULL DEFAULT 0.5,
      hit_count INTEGER NOT NULL DEFAULT 1,
      last_seen_ms INTEGER NOT NULL,
      created_ms INTEGER NOT NULL,
      PRIMARY KEY (project_slug, pattern)
    );
    CREATE INDEX IF NOT EXISTS idx_adaptive_rules_last_seen ON adaptive_rules (project_slug, last_seen_ms DESC);
    CREATE INDEX IF NOT EXISTS idx_adaptive_rules_confidence ON adaptive_rules (project_slug, confidence DESC);
  `);
  const columns = db.pragma('table_info(adaptive_rules)').map((c) => c.name);
  if (!columns.includes('error_message')) {
    db.exec('ALTER TABLE adaptive_rules ADD COLUMN error_message TEXT');
    db.exec('ALTER TABLE adaptive_rules ADD COLUMN solution TEXT');
    db.exec('ALTER TABLE adaptive_rules ADD COLUMN context TEXT');
  }
  db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)').run('adaptive_rules_schema_version', '2');
  return version;
}

const UPSERT_RULE = `
  INSERT INTO adaptive_rules (project_slug, pattern, confidence, hit_count, last_seen_ms, created_ms, error_message, solution, context)
  VALUES (@project_slug, @pattern, @confidence, @hit_count, @last_seen_ms, @created_ms, @error_message, @solution, @context)
  ON CONFLICT(project_slug, pattern) DO UPDATE SET
    confidence = excluded.confidence,
    hit_count = excluded.hit_count,
    last_seen_ms = excluded.last_seen_ms,
    created_ms = MIN(adaptive_rules.created_ms, excluded.created_ms),
    error_message = COALESCE(excluded.error_message, adaptive_rules.error_message),
    solution = COALESCE(excluded.solution, adaptive_rules.solution),
    context = COALESCE(excluded.context, adaptive_rules.context)`;

test('store-adapter: adaptive_rules DDL, pluck, named upsert, pragma table_info, CRUD', (t) => {
  const { store } = openStore(t);
  const db = store.db;
  assert.equal(ensureAdaptiveRules(db), undefined);
  assert.equal(ensureAdaptiveRules(db), '2');
  const info = db.pragma('table_info(adaptive_rules)');
  assert.ok(Array.isArray(info));
  assert.deepEqual(
    info.map((c) => c.name),
    ['project_slug', 'pattern', 'confidence', 'hit_count', 'last_seen_ms', 'created_ms', 'error_message', 'solution', 'context'],
  );
  assert.deepEqual(Object.keys(info[0]), ['cid', 'name', 'type', 'notnull', 'dflt_value', 'pk']);

  const upsert = db.prepare(UPSERT_RULE);
  const row = {
    project_slug: 'proj',
    pattern: 'ENOENT',
    confidence: 0.5,
    hit_count: 1,
    last_seen_ms: 2000,
    created_ms: 2000,
    error_message: 'no such file',
    solution: null,
    context: undefined,
    ignored_extra_key: true,
  };
  assert.equal(upsert.run(row).changes, 1);
  assert.equal(upsert.run({ ...row, confidence: 0.9, hit_count: 2, created_ms: 1000, error_message: null, solution: 'mkdir' }).changes, 1);
  const { ignored_extra_key, ...missingContext } = row;
  void ignored_extra_key;
  delete missingContext.context;
  assert.throws(() => upsert.run(missingContext), { name: 'RangeError', message: 'Missing named parameter "context"' });
  assert.throws(() => upsert.run({ ...row, confidence: true }), {
    name: 'TypeError',
    message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null',
  });

  const get = db.prepare('SELECT * FROM adaptive_rules WHERE project_slug = ? AND pattern = ?');
  assert.deepEqual(get.get('proj', 'ENOENT'), {
    project_slug: 'proj',
    pattern: 'ENOENT',
    confidence: 0.9,
    hit_count: 2,
    last_seen_ms: 2000,
    created_ms: 1000,
    error_message: 'no such file',
    solution: 'mkdir',
    context: null,
  });
  upsert.run({ ...row, project_slug: 'proj', pattern: 'EACCES', confidence: 0.95 });
  upsert.run({ ...row, project_slug: 'other', pattern: 'X', confidence: 0.1 });
  const bySlug = db.prepare('SELECT pattern FROM adaptive_rules WHERE project_slug = ? ORDER BY confidence DESC');
  assert.deepEqual(bySlug.all('proj'), [{ pattern: 'EACCES' }, { pattern: 'ENOENT' }]);
  assert.equal(db.prepare('SELECT * FROM adaptive_rules ORDER BY confidence DESC').all().length, 3);
  const del = db.prepare('DELETE FROM adaptive_rules WHERE project_slug = ? AND pattern = ?');
  assert.equal(del.run('other', 'X').changes, 1);
  assert.equal(del.run('other', 'X').changes, 0);
  const prune = db.prepare('DELETE FROM adaptive_rules WHERE last_seen_ms < ? AND confidence < ?');
  assert.equal(prune.run(3000, 0.92).changes, 1);
  assert.deepEqual(db.prepare('SELECT pattern FROM adaptive_rules').pluck().all(), ['EACCES']);
});

test('hitl: store methods inside store.db.transaction commit together, and a throw rolls all back', (t) => {
  const { store } = openStore(t);
  store.registerAgent({ agent_id: 'hitl-target', cli: 'claude', pid: 7 });
  const request = store.insertHumanRequest({
    requester_agent: 'hitl-target',
    kind: 'approval',
    prompt: 'ok?',
    deadline_ms: Date.now() - 1000,
    default_action: 'decline',
    correlation_id: 'corr-1',
    trace_id: 'trace-1',
  });
  const requestId = request.request_id ?? request.id;
  assert.equal(typeof requestId, 'string');
  const queued = store.auditLog({ type: 'event', from: 'hub', to: 'hitl-target', topic: 'hitl', payload: { a: 1 } });

  const checkTimeouts = (fail) =>
    store.db.transaction(() => {
      assert.equal(store.db.inTransaction, true);
      store.updateHumanRequest(requestId, 'timed_out', { action: 'deny' });
      const msg = store.auditLog({ type: 'response', from: 'hub', to: 'hitl-target', topic: 'hitl.timeout', payload: { requestId }, correlation_id: 'corr-1' });
      store.updateMessageStatus(queued.id, 'delivered');
      if (fail) throw new Error('handlePublish failed');
      return msg;
    })();

  const countMessages = () => store.db.prepare('SELECT count(*) FROM messages').pluck().get();
  const before = countMessages();
  assert.throws(() => checkTimeouts(true), { message: 'handlePublish failed' });
  assert.equal(store.db.inTransaction, false);
  assert.equal(countMessages(), before);
  assert.equal(store.getHumanRequest(requestId).state, request.state);
  assert.equal(store.getMessage(queued.id).status, queued.status);

  const msg = checkTimeouts(false);
  assert.equal(store.db.inTransaction, false);
  assert.equal(countMessages(), before + 1);
  assert.equal(store.getHumanRequest(requestId).state, 'timed_out');
  assert.equal(store.getMessage(queued.id).status, 'delivered');
  assert.equal(store.getMessage(msg.id).topic, 'hitl.timeout');

  // Nested: an inner db.transaction that throws is a savepoint; the outer one commits.
  store.db.transaction(() => {
    store.registerAgent({ agent_id: 'outer', cli: 'codex', pid: 1 });
    assert.throws(() =>
      store.db.transaction(() => {
        store.registerAgent({ agent_id: 'inner', cli: 'codex', pid: 2 });
        throw new Error('inner');
      })(),
    );
  })();
  assert.equal(store.getAgent('outer').agent_id, 'outer');
  assert.equal(store.getAgent('inner'), null);
});

// --- pipeline/state.mjs ---
const pipelineStatements = new WeakMap();

function ensurePipelineTable(db) {
  db.exec(`CREATE TABLE IF NOT EXISTS pipeline_state (
    team_name TEXT PRIMARY KEY,
    phase TEXT NOT NULL DEFAULT 'plan',
    fix_attempt INTEGER DEFAULT 0,
    fix_max INTEGER DEFAULT 3,
    ralph_iteration INTEGER DEFAULT 0,
    ralph_max INTEGER DEFAULT 10,
    artifacts TEXT DEFAULT '{}',
    phase_history TEXT DEFAULT '[]',
    created_at INTEGER,
    updated_at INTEGER
  )`);
  let s = pipelineStatements.get(db);
  if (!s) {
    s = {
      insert: db.prepare(`INSERT INTO pipeline_state (team_name, phase, fix_attempt, fix_max, ralph_iteration, ralph_max, artifacts, phase_history, created_at, updated_at)
        VALUES (@team_name, @phase, @fix_attempt, @fix_max, @ralph_iteration, @ralph_max, @artifacts, @phase_history, @created_at, @updated_at)`),
      get: db.prepare('SELECT * FROM pipeline_state WHERE team_name = ?'),
      update: db.prepare(`UPDATE pipeline_state SET phase = @phase, fix_attempt = @fix_attempt, artifacts = @artifacts,
        phase_history = @phase_history, updated_at = @updated_at WHERE team_name = @team_name`),
      remove: db.prepare('DELETE FROM pipeline_state WHERE team_name = ?'),
      list: db.prepare('SELECT * FROM pipeline_state ORDER BY team_name'),
    };
    pipelineStatements.set(db, s);
  }
  return s;
}

function initPipelineState(db, team, now) {
  const s = ensurePipelineTable(db);
  const row = { team_name: team, phase: 'plan', fix_attempt: 0, fix_max: 3, ralph_iteration: 0, ralph_max: 10, artifacts: '{}', phase_history: '["plan"]', created_at: now, updated_at: now };
  db.transaction(() => {
    s.remove.run(team);
    s.insert.run(row);
  })();
  return s.get.get(team);
}

function updatePipelineState(db, team, patch, now) {
  const s = ensurePipelineTable(db);
  return db.transaction(() => {
    const current = s.get.get(team);
    if (!current) return null;
    const history = JSON.parse(current.phase_history);
    if (patch.phase && patch.phase !== current.phase) history.push(patch.phase);
    const next = {
      team_name: team,
      phase: patch.phase ?? current.phase,
      fix_attempt: patch.fix_attempt ?? current.fix_attempt,
      artifacts: JSON.stringify({ ...JSON.parse(current.artifacts), ...(patch.artifacts ?? {}) }),
      phase_history: JSON.stringify(history),
      updated_at: now,
    };
    if (s.update.run(next).changes !== 1) throw new Error('lost update');
    return s.get.get(team);
  })();
}

test('pipeline/state: WeakMap-cached statements keyed by store.db, transactions, run(x).changes', (t) => {
  const { store } = openStore(t, true);
  const db = store.db;
  assert.equal(store.db, db, 'store.db is one stable object');
  const first = ensurePipelineTable(db);
  assert.equal(ensurePipelineTable(store.db), first, 'cached statements are found again');
  const created = initPipelineState(db, 'team-a', 1000);
  assert.deepEqual(created, {
    team_name: 'team-a',
    phase: 'plan',
    fix_attempt: 0,
    fix_max: 3,
    ralph_iteration: 0,
    ralph_max: 10,
    artifacts: '{}',
    phase_history: '["plan"]',
    created_at: 1000,
    updated_at: 1000,
  });
  const updated = updatePipelineState(db, 'team-a', { phase: 'exec', artifacts: { plan: 'p.md' } }, 2000);
  assert.equal(updated.phase, 'exec');
  assert.equal(updated.phase_history, '["plan","exec"]');
  assert.equal(updated.artifacts, '{"plan":"p.md"}');
  assert.equal(updatePipelineState(db, 'missing', { phase: 'x' }, 3000), null);
  initPipelineState(db, 'team-b', 4000);
  assert.deepEqual(first.list.all().map((r) => r.team_name), ['team-a', 'team-b']);
  assert.equal(initPipelineState(db, 'team-a', 5000).phase, 'plan', 're-init replaces the row');
  assert.equal(first.remove.run('team-b').changes, 1);
  assert.equal(first.remove.run('team-b').changes, 0);
  assert.equal(db.inTransaction, false);
});

test('session-fingerprint: _meta keys through prepare/get/run; SqliteError codes from raw SQL', (t) => {
  const { store } = openStore(t);
  const key = 'adaptive_fingerprint:proj';
  const load = () => {
    const row = store.db?.prepare('SELECT value FROM _meta WHERE key = ?').get(key);
    return row?.value ? JSON.parse(row.value) : null;
  };
  assert.equal(load(), null);
  const save = (value) => store.db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)').run(key, JSON.stringify(value));
  const result = save({ hits: 1, files: ['a.js'] });
  assert.deepEqual(Object.keys(result), ['changes', 'lastInsertRowid']);
  assert.equal(result.changes, 1);
  assert.equal(typeof result.lastInsertRowid, 'number');
  assert.deepEqual(load(), { hits: 1, files: ['a.js'] });
  save({ hits: 2 });
  assert.deepEqual(load(), { hits: 2 });
  assert.equal(store.db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get(), '6');

  // Raw probes the tests make: CHECK / UNIQUE errors carry better-sqlite3's codes.
  const error = (() => {
    try {
      store.db.prepare('INSERT INTO _meta (key, value) VALUES (?, ?)').run(key, 'dup');
    } catch (e) {
      return e;
    }
    return null;
  })();
  assert.ok(error instanceof SqliteError);
  assert.equal(error.code, 'SQLITE_CONSTRAINT_PRIMARYKEY');
  assert.match(error.message, /UNIQUE constraint failed: _meta.key/);
  assert.throws(() => store.db.exec("INSERT INTO agents (agent_id, cli, pid, status, last_seen_ms, lease_expires_ms) VALUES ('x', 'nope', 1, 'online', 1, 1)"), (e) => e.name === 'SqliteError' && /CHECK constraint failed/.test(e.message) && e.code === 'SQLITE_CONSTRAINT_CHECK');
});
