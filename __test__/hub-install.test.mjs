// README "Using it in the hub", step by step, on a hub-shaped folder this test writes: the
// package installed from its packed tarballs (as npm installs it from the registry), the
// one-line hub/store.mjs that re-exports it, a hub/store-adapter.mjs that imports
// ./store.mjs the way the hub's does (createStore with importBetterSqlite3's constructor,
// type "sqlite", the adaptive rules through store.db, the in-memory fallback), the check
// that the hub runs on it, and what a machine without the binary gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { npmCli } from '../tools/toolchain.mjs';
import { emulator, packWithLocalBinary, repoRoot, tempDir } from './helpers.mjs';

// The README's line, word for word.
const STORE_MJS = "export * from 'triflux-native-store';\n";

// The hub's adapter, reduced to what it does with the store (its adaptive-rules schema and
// CRUD on store.db, its fall-back to a memory store on any failure).
const ADAPTER = `import { createStore, importBetterSqlite3 } from './store.mjs';

function ensureAdaptiveRulesSchema(db) {
  const version = db.prepare('SELECT value FROM _meta WHERE key = ?').pluck().get('adaptive_rules_schema_version');
  if (version === '2') return;
  db.exec(\`CREATE TABLE IF NOT EXISTS adaptive_rules (
      project_slug TEXT NOT NULL, pattern TEXT NOT NULL, confidence REAL NOT NULL DEFAULT 0.5,
      hit_count INTEGER NOT NULL DEFAULT 1, last_seen_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL,
      error_message TEXT, solution TEXT, context TEXT, PRIMARY KEY (project_slug, pattern));
    CREATE INDEX IF NOT EXISTS idx_adaptive_rules_seen ON adaptive_rules(project_slug, last_seen_ms DESC);\`);
  if (!db.pragma('table_info(adaptive_rules)').some((c) => c.name === 'context')) throw new Error('no v2 columns');
  db.prepare('INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)').run('adaptive_rules_schema_version', '2');
}

function attachAdaptiveRuleStore(store) {
  if (store.type !== 'sqlite' || !store.db) return store;
  ensureAdaptiveRulesSchema(store.db);
  store.addAdaptiveRule = (rule) =>
    store.db
      .prepare(\`INSERT INTO adaptive_rules (project_slug, pattern, confidence, last_seen_ms, created_ms, solution)
        VALUES (@project_slug, @pattern, @confidence, @now, @now, @solution)
        ON CONFLICT(project_slug, pattern) DO UPDATE SET hit_count = hit_count + 1, last_seen_ms = excluded.last_seen_ms\`)
      .run({ confidence: 0.5, ...rule, now: Date.now() }).changes;
  store.findAdaptiveRule = (slug, pattern) =>
    store.db.prepare('SELECT * FROM adaptive_rules WHERE project_slug = ? AND pattern = ?').get(slug, pattern) ?? null;
  return store;
}

export async function createStoreAdapter(dbPath, options = {}) {
  const loadDatabase = options.loadDatabase || importBetterSqlite3;
  try {
    const DatabaseCtor = await loadDatabase();
    const store = createStore(dbPath, { DatabaseCtor });
    store.type = 'sqlite';
    return attachAdaptiveRuleStore(store);
  } catch (error) {
    console.warn('[store] SQLite unavailable (' + error.message + '), using in-memory fallback');
    return { type: 'memory', close() {} };
  }
}
`;

// The hub's side: create the store through the adapter, write, read, close (twice, as
// the hub's stop() and idle timer both may), reopen and read the same rows back.
const HUB = `import { createStoreAdapter } from './store-adapter.mjs';

const dbPath = process.argv[2];
const first = await createStoreAdapter(dbPath);
const out = { type: first.type };
if (first.type === 'sqlite') {
  first.registerAgent({ agent_id: 'codex-1', cli: 'codex', topics: ['build'], heartbeat_ttl_ms: 60000 });
  const sent = first.enqueueMessage({ type: 'event', from: 'hub', to: 'codex-1', topic: 'build', priority: 5, ttl_ms: 60000, payload: { n: 1 } });
  first.addAdaptiveRule({ project_slug: 'p', pattern: 'timeout', solution: 'retry' });
  out.written = { agent: first.getAgent('codex-1').agent_id, message: first.getMessage(sent.id).payload };
  first.close();
  first.close();
  const again = await createStoreAdapter(dbPath);
  out.reopened = {
    type: again.type,
    agents: again.listAllAgents().map((a) => a.agent_id),
    message: again.getMessage(sent.id).payload,
    rule: again.findAdaptiveRule('p', 'timeout').solution,
    stats: again.getHubStats().total_messages,
    schema: again.db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get(),
  };
  again.close();
}
console.log(JSON.stringify(out));
`;

function run(command, args, { cwd, env = {} }) {
  const clean = { ...process.env };
  delete clean.TRIFLUX_NATIVE_STORE_BINARY;
  delete clean.NAPI_RS_NATIVE_LIBRARY_PATH;
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...clean, ...env }, shell: process.platform === 'win32' });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r;
}
const lastJson = (r) => JSON.parse(r.stdout.trim().split('\n').at(-1));

// npm's .cmd shims end in a `goto` that Windows' cmd.exe runs and Wine's silently does not.
const wineSkip = emulator === 'wine' && "Wine's cmd.exe does not run npm's .cmd shims (npm install exits 0 without installing)";
test('README "Using it in the hub": install, the one-line hub/store.mjs, the check, the fall-back', { skip: wineSkip }, (t) => {
  const { tarballs } = packWithLocalBinary(t);
  const hub = tempDir(t);
  writeFileSync(join(hub, 'package.json'), JSON.stringify({ name: 'hub-under-test', version: '1.0.0', private: true, type: 'module' }));
  // Step 1, the install (from the registry: npm install triflux-native-store).
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], { cwd: hub });
  // Step 2, hub/store.mjs.
  mkdirSync(join(hub, 'hub'));
  writeFileSync(join(hub, 'hub', 'store.mjs'), STORE_MJS);
  writeFileSync(join(hub, 'hub', 'store-adapter.mjs'), ADAPTER);
  writeFileSync(join(hub, 'hub', 'hub.mjs'), HUB);
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  assert.ok(readme.includes(STORE_MJS.trim()), 'the README gives this line');

  // Step 3, the check: the hub's store.mjs answers with this package and its binary.
  const check = readme.match(/^ *node -e "(import\('\.\/hub\/store\.mjs'\).*)"$/m);
  assert.ok(check, 'the README gives the check command');
  const version = lastJson(run(process.execPath, ['-e', check[1]], { cwd: hub }));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(version.version, pkg.version);
  assert.ok(realpathSync(version.binary).startsWith(realpathSync(join(hub, 'node_modules'))), `the installed binary: ${version.binary}`);

  // The hub runs on it: create, write, read, close, reopen.
  const dbPath = join(hub, 'data', 'state.db');
  const out = lastJson(run(process.execPath, [join('hub', 'hub.mjs'), dbPath], { cwd: hub }));
  assert.deepEqual(out, {
    type: 'sqlite',
    written: { agent: 'codex-1', message: { n: 1 } },
    reopened: { type: 'sqlite', agents: ['codex-1'], message: { n: 1 }, rule: 'retry', stats: 1, schema: '6' },
  });

  // A hub of a later release names its schema's entry in the same line; on its own file,
  // and on the file the v6 hub wrote (migrated, with the original's warning).
  for (const version of ['7', '8']) {
    writeFileSync(join(hub, 'hub', 'store.mjs'), `export * from 'triflux-native-store/v${version}';\n`);
    const fresh = lastJson(run(process.execPath, [join('hub', 'hub.mjs'), join(hub, 'data', `v${version}.db`)], { cwd: hub }));
    assert.deepEqual(fresh.reopened, { type: 'sqlite', agents: ['codex-1'], message: { n: 1 }, rule: 'retry', stats: 1, schema: version });
    const upgraded = run(process.execPath, [join('hub', 'hub.mjs'), dbPath], { cwd: hub });
    assert.equal(lastJson(upgraded).reopened.schema, version);
    assert.match(upgraded.stderr, new RegExp(`\\[store\\] schema version mismatch: found=${version - 1} expected=${version}\\.`));
  }

  // A machine without the binary: the hub starts on its in-memory store, and says why.
  const missing = join(hub, 'no-such-binary.node');
  const bare = run(process.execPath, [join('hub', 'hub.mjs'), join(hub, 'data', 'other.db')], {
    cwd: hub,
    env: { TRIFLUX_NATIVE_STORE_BINARY: missing },
  });
  assert.deepEqual(lastJson(bare), { type: 'memory' });
  assert.match(bare.stderr, /\[store\] SQLite unavailable \(triflux-native-store: cannot load the native binary for /);
});

// ------------------------------------------------------------------ a hub without better-sqlite3

// The hub's pipeline-state module, reduced to what the bridge does with the file: the
// table (created where missing), a read, a list and an upsert.
const PIPELINE_STATE = `export function ensurePipelineTable(db) {
  db.exec(\`CREATE TABLE IF NOT EXISTS pipeline_state (
    team_name TEXT PRIMARY KEY, phase TEXT NOT NULL DEFAULT 'plan', fix_attempt INTEGER DEFAULT 0,
    artifacts TEXT DEFAULT '{}', created_at INTEGER, updated_at INTEGER)\`);
}
export function readPipelineState(db, team) {
  const row = db.prepare('SELECT * FROM pipeline_state WHERE team_name = ?').get(team);
  return row ? { ...row, artifacts: JSON.parse(row.artifacts) } : null;
}
export function listPipelineStates(db) {
  return db.prepare('SELECT team_name, phase FROM pipeline_state ORDER BY team_name').all();
}
export function advancePipeline(db, team, phase) {
  const now = Date.now();
  return db.transaction(() => {
    db.prepare(\`INSERT INTO pipeline_state (team_name, phase, created_at, updated_at) VALUES (@team, @phase, @now, @now)
      ON CONFLICT(team_name) DO UPDATE SET phase = excluded.phase, fix_attempt = fix_attempt + 1, updated_at = excluded.updated_at\`)
      .run({ team, phase, now });
    return readPipelineState(db, team);
  })();
}
`;

// hub/bridge.mjs's two fall-backs as it writes them: a dynamic import of better-sqlite3,
// the hub file read-only for the state and read-write to advance it, closed after each.
const BRIDGE = `import { existsSync } from 'node:fs';
export async function pipelineState(dbPath, team) {
  const { default: Database } = await import('better-sqlite3');
  const { ensurePipelineTable, readPipelineState } = await import('./pipeline/state.mjs');
  if (!existsSync(dbPath)) return { ok: false, error: 'hub_db_not_found' };
  const db = new Database(dbPath, { readonly: true });
  ensurePipelineTable(db);
  const state = readPipelineState(db, team);
  let readonlyWrite;
  try { db.prepare('DELETE FROM pipeline_state').run(); } catch (e) {
    readonlyWrite = { sqliteError: e instanceof Database.SqliteError, code: e.code };
  }
  db.close();
  return state ? { ok: true, data: state, readonlyWrite } : { ok: false, error: 'pipeline_not_found' };
}
export async function pipelineAdvance(dbPath, team, phase) {
  const { default: Database } = await import('better-sqlite3');
  const { advancePipeline } = await import('./pipeline/state.mjs');
  const db = new Database(dbPath);
  const result = advancePipeline(db, team, phase);
  db.close();
  return { ok: true, data: result };
}
const [command, dbPath, team, phase] = process.argv.slice(2);
if (import.meta.url === 'file://' + process.argv[1]) {
  const out = command === 'state' ? await pipelineState(dbPath, team) : await pipelineAdvance(dbPath, team, phase);
  console.log(JSON.stringify(out));
}
`;

// The running hub: its store on the file, the pipeline table through store.db, the bridge
// in this process (one SQLite library, so closing the bridge's connections leaves the
// store's locks alone) and in a child process, and the store still writing after both.
const HUB_WITH_BRIDGE = `import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createStore, Database } from './store.mjs';
import { pipelineAdvance, pipelineState } from './bridge.mjs';
import { ensurePipelineTable } from './pipeline/state.mjs';
import StaticBetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const dbPath = process.argv[2];
const child = (...args) => JSON.parse(spawnSync(process.execPath, ['hub/bridge.mjs', ...args], { encoding: 'utf8' }).stdout);
const store = createStore(dbPath);
store.registerAgent({ agent_id: 'codex-1', cli: 'codex' });
ensurePipelineTable(store.db);
const out = {
  sameClass: StaticBetterSqlite3 === Database && require('better-sqlite3') === Database &&
    (await import('better-sqlite3')).default === Database && Database.SqliteError === require('better-sqlite3').SqliteError,
  missing: await pipelineState(dbPath, 'team-a'),
  advanced: (await pipelineAdvance(dbPath, 'team-a', 'exec')).data.phase,
  read: (await pipelineState(dbPath, 'team-a')).data.phase,
  readonlyWrite: (await pipelineState(dbPath, 'team-a')).readonlyWrite,
};
store.registerAgent({ agent_id: 'codex-2', cli: 'codex' });
out.childAdvanced = child('advance', dbPath, 'team-b', 'verify').data.phase;
// The store made the table already (its schema has it): the child reads the store's row.
const { team_name, phase, fix_attempt, fix_max, artifacts, updated_at } = child('state', dbPath, 'team-a').data;
out.childRead = { team_name, phase, fix_attempt, fix_max, artifacts, updated: typeof updated_at };
store.enqueueMessage({ type: 'event', from: 'hub', to: 'codex-2', topic: 't', payload: { after: 'bridge' } });
out.store = {
  agents: store.listAllAgents().map((a) => a.agent_id).sort(),
  pipelines: store.db.prepare('SELECT team_name, phase, fix_attempt FROM pipeline_state ORDER BY team_name').all(),
  messages: store.getHubStats().total_messages,
  integrity: store.db.pragma('integrity_check', { simple: true }),
};
store.close();
console.log(JSON.stringify(out));
`;

const noCompilerSkip = wineSkip || (process.platform === 'win32' && 'the PATH without a compiler is made of symlinks to node and npm (POSIX)');
test('a hub with no better-sqlite3 and no compiler: the alias serves hub/bridge.mjs beside a running store', { skip: noCompilerSkip }, (t) => {
  const { dir, tarballs } = packWithLocalBinary(t);
  const compat = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: join(repoRoot, 'compat', 'better-sqlite3'), encoding: 'utf8' });
  assert.equal(compat.status, 0, compat.stderr);
  const alias = join(dir, compat.stdout.trim().split('\n').at(-1));
  const hub = tempDir(t);
  // A PATH holding node and npm only: nothing could compile better-sqlite3 here.
  const bin = join(hub, '.bin-sandbox');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync(npmCli(), join(bin, 'npm'));
  const env = { PATH: bin, HOME: join(hub, '.home'), npm_config_cache: join(hub, '.npm-cache'), npm_config_update_notifier: 'false' };
  for (const tool of ['cc', 'gcc', 'c++', 'make', 'python3', 'node-gyp']) {
    assert.notEqual(spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { env }).status, 0, `${tool} is on the sandbox PATH`);
  }
  writeFileSync(join(hub, 'package.json'), JSON.stringify({ name: 'hub-without-better-sqlite3', version: '1.0.0', private: true, type: 'module' }));
  // The recipe's dependencies, from the tarballs (the registry's alias is
  // "better-sqlite3": "npm:triflux-better-sqlite3@<version>").
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', `better-sqlite3@file:${alias}`, ...tarballs], { cwd: hub, env });
  const aliased = JSON.parse(readFileSync(join(hub, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8'));
  assert.equal(aliased.name, 'triflux-better-sqlite3');
  assert.equal(existsSync(join(hub, 'node_modules', 'better-sqlite3', 'build')), false, 'no compiled better-sqlite3');
  const manifest = JSON.parse(readFileSync(join(hub, 'package.json'), 'utf8'));
  assert.match(manifest.dependencies['better-sqlite3'], /^file:.*triflux-better-sqlite3-/);

  mkdirSync(join(hub, 'hub', 'pipeline'), { recursive: true });
  writeFileSync(join(hub, 'hub', 'store.mjs'), STORE_MJS);
  writeFileSync(join(hub, 'hub', 'pipeline', 'state.mjs'), PIPELINE_STATE);
  writeFileSync(join(hub, 'hub', 'bridge.mjs'), BRIDGE);
  writeFileSync(join(hub, 'hub', 'hub.mjs'), HUB_WITH_BRIDGE);
  const out = lastJson(run(process.execPath, [join('hub', 'hub.mjs'), join(hub, 'data', 'hub.db')], { cwd: hub, env }));
  assert.deepEqual(out, {
    sameClass: true,
    missing: { ok: false, error: 'pipeline_not_found' },
    advanced: 'exec',
    read: 'exec',
    readonlyWrite: { sqliteError: true, code: 'SQLITE_READONLY' },
    childAdvanced: 'verify',
    childRead: { team_name: 'team-a', phase: 'exec', fix_attempt: 0, fix_max: 3, artifacts: {}, updated: 'number' },
    store: {
      agents: ['codex-1', 'codex-2'],
      pipelines: [{ team_name: 'team-a', phase: 'exec', fix_attempt: 0 }, { team_name: 'team-b', phase: 'verify', fix_attempt: 0 }],
      messages: 1,
      integrity: 'ok',
    },
  });
  // docs/hub-without-better-sqlite3.md's check, run from the hub's folder.
  const doc = readFileSync(join(repoRoot, 'docs', 'hub-without-better-sqlite3.md'), 'utf8');
  const check = doc.match(/^node -e "(import\('better-sqlite3'\).*)"$/m);
  assert.ok(check, 'the doc gives the check command');
  assert.equal(run(process.execPath, ['-e', check[1]], { cwd: hub, env }).stdout.trim(), 'true');
});
