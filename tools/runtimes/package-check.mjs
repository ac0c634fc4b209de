// The package as a Bun or Deno user gets it: the packed packages served by a local
// registry (registry.mjs), installed by the runtime's own installer into an empty project
// whose package.json names the package and aliases better-sqlite3 to
// triflux-better-sqlite3 (as a hub's does), with a PATH holding that runtime alone (no
// node, no npm) and an empty cache; then an ESM and a CommonJS smoke, run by the runtime,
// that load the binary from the installed platform package, and `triflux-store info` as
// that runtime runs a package's command (bunx; deno run npm:).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkg } from '../targets.mjs';
import { runChild } from './child.mjs';
import { packPublished } from './packages.mjs';
import { startRegistry } from './registry.mjs';

const ESM_SMOKE = ({ host, hostPackage, binaryName }) => `
import assert from 'node:assert/strict';
import { createStore, version } from 'triflux-native-store';
import { createStore as createStoreV8 } from 'triflux-native-store/v8';
import Database from 'triflux-native-store/better-sqlite3';
import AliasedBetterSqlite3 from 'better-sqlite3';
assert.equal(AliasedBetterSqlite3, Database);
const v = version();
assert.equal(v.version, ${JSON.stringify(pkg.version)});
assert.equal(v.target, ${JSON.stringify(host)});
assert.ok(v.binary.replaceAll('\\\\', '/').endsWith(${JSON.stringify(`/node_modules/${hostPackage}/${binaryName}.${host}.node`)}), v.binary);
const store = createStore('data/esm/hub.db');
store.registerAgent({ agent_id: 'a1', cli: 'codex' });
assert.equal(store.getAgent('a1').status, 'online');
store.close();
const v8 = createStoreV8('data/v8/hub.db');
assert.equal(v8.db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get(), '8');
v8.close();
const ro = new Database('data/esm/hub.db', { readonly: true });
assert.equal(ro.prepare('SELECT count(*) FROM agents').pluck().get(), 1);
ro.close();
console.log('esm smoke ok: ' + JSON.stringify(v));
`;

const CJS_SMOKE = () => `
const assert = require('node:assert/strict');
const { createStore, Database, SqliteError } = require('triflux-native-store');
const { createStore: createStoreV7 } = require('triflux-native-store/v7');
const BetterSqlite3 = require('better-sqlite3');
assert.equal(BetterSqlite3, Database);
assert.equal(BetterSqlite3.SqliteError, SqliteError);
const store = createStore('data/cli/hub.db');
store.registerAgent({ agent_id: 'a1', cli: 'codex' });
store.registerAgent({ agent_id: 'a2', cli: 'claude' });
const job = store.createAssign({ supervisor_agent: 'a1', worker_agent: 'a2', task: 't' });
assert.equal(store.getAssign(job.job_id).status, 'queued');
assert.throws(() => store.db.prepare('SELECT * FROM nowhere'), SqliteError);
store.close();
const v7 = createStoreV7('data/v7/hub.db');
assert.equal(v7.type, 'sqlite');
v7.close();
const runtime = typeof Bun !== 'undefined' ? 'Bun ' + Bun.version : typeof Deno !== 'undefined' ? 'Deno ' + Deno.version.deno : 'Node ' + process.version;
console.log('cjs smoke ok on ' + runtime);
`;

/** How each runtime installs a project's dependencies and runs a package's command. */
const HOW = {
  bun: {
    registryEnv: (url, work) => ({ BUN_CONFIG_REGISTRY: url, BUN_INSTALL_CACHE_DIR: join(work, 'cache'), DO_NOT_TRACK: '1' }),
    install: ['install'],
    run: (file) => [file],
    // bunx runs a command's `#!/usr/bin/env node` line with Bun when there is no node;
    // --bun makes it Bun where there is one.
    commands: (args) => [['bunx', ['triflux-store', ...args]], ['bunx', ['--bun', 'triflux-store', ...args]]],
  },
  deno: {
    registryEnv: (url, work) => ({ NPM_CONFIG_REGISTRY: url, DENO_DIR: join(work, 'cache'), DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' }),
    install: ['install'],
    // What a store needs of Deno's permissions (ffi: loading a native addon); a
    // read-only command needs no write.
    run: (file) => ['run', '--allow-read', '--allow-write', '--allow-env', '--allow-ffi', file],
    commands: (args) => [
      ['deno', ['run', '-A', `npm:${pkg.name}`, ...args]],
      ['deno', ['run', '--allow-read', '--allow-env', '--allow-ffi', `npm:${pkg.name}`, ...args]],
    ],
  },
};

/**
 * Runs the install and the smokes under `runtime`; returns { ok, steps: [{ what, ok, output }], fetched }
 * where `fetched` lists the tarballs the installer downloaded.
 */
export async function checkPackage(runtime) {
  const how = HOW[runtime.name];
  const work = mkdtempSync(join(tmpdir(), 'tfx-runtime-package-'));
  const steps = [];
  const step = (what, ok, output = '') => {
    steps.push({ what, ok, output });
    console.log(`${ok ? 'ok' : 'FAILED'} - package: ${what}`);
    if (!ok) console.log(output.replace(/^/gm, '    '));
    return ok;
  };
  try {
    const tarballs = join(work, 'tarballs');
    const { host, hostPackage } = packPublished(tarballs, join(work, 'scratch'));
    const registry = await startRegistry(tarballs);
    try {
      // The PATH holds what the runtime's installer puts there (bun and bunx, or deno) and nothing else.
      const bin = join(work, 'bin');
      mkdirSync(bin);
      for (const command of runtime.commands) symlinkSync(join(runtime.bin, command), join(bin, command));
      const onPath = readdirSync(bin).sort();
      if (!step(`PATH holds ${onPath.join(', ')} only`, !onPath.includes('node') && !onPath.includes('npm'), onPath.join('\n'))) return { ok: false, steps };
      const env = { PATH: bin, HOME: join(work, 'home'), ...how.registryEnv(registry.url, work) };
      const project = join(work, 'project');
      mkdirSync(project);
      const dependencies = { [pkg.name]: pkg.version, 'better-sqlite3': `npm:triflux-better-sqlite3@${pkg.version}` };
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'runtime-smoke', version: '1.0.0', private: true, dependencies }, null, 2));
      const install = await runChild(runtime.exe, how.install, { cwd: project, env });
      const fetched = registry.requests.filter((r) => r.endsWith('.tgz')).map((r) => r.split('/-/')[1]).sort();
      const installed = install.code === 0 && fetched.some((f) => f.startsWith(`${hostPackage}-`));
      if (!step(`${runtime.name} ${how.install.join(' ')} from the local registry (fetched ${fetched.join(', ')})`, installed, `${install.stdout}${install.stderr}`)) {
        return { ok: false, steps, fetched };
      }

      writeFileSync(join(project, 'smoke.mjs'), ESM_SMOKE({ host, hostPackage, binaryName: pkg.napi.binaryName }));
      writeFileSync(join(project, 'smoke.cjs'), CJS_SMOKE());
      for (const file of ['smoke.mjs', 'smoke.cjs']) {
        const r = await runChild(runtime.exe, how.run(file), { cwd: project, env });
        step(`${file}: ${(r.stdout.trim().split('\n').at(-1) ?? '').slice(0, 160)}`, r.code === 0, `${r.stdout}${r.stderr}`);
      }
      const hubDb = join('data', 'cli', 'hub.db');
      if (!existsSync(join(project, hubDb))) return { ok: false, steps, fetched };
      for (const [cmd, args] of how.commands(['info', hubDb])) {
        const r = await runChild(join(bin, cmd), args, { cwd: project, env });
        const answered = /^schema version\s+6 \(triflux-native-store\)$/m.test(r.stdout) && /^agents\s+2$/m.test(r.stdout) && r.stdout.includes(`${pkg.name} ${pkg.version}`);
        step(`${cmd} ${args.join(' ')} answers (schema version 6, 2 agents)`, r.code === 0 && answered, `${r.stdout}${r.stderr}`);
      }
      return { ok: steps.every((s) => s.ok), steps, fetched };
    } finally {
      await registry.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
