// The fresh-install test (.ci/run): what a hub gets from `npm install` on a machine
// with no compiler. Packs the main package, the host's platform package and the
// better-sqlite3 alias package, installs them from the tarballs (the last one under the
// name better-sqlite3, as a hub's npm alias does) into an empty project with a PATH
// holding only node and npm (no cargo, rustc, cc, make or python) and an empty npm
// cache with --offline (so the registry cannot supply anything), then runs an ESM, a
// CommonJS and a TypeScript smoke. The main package carries its optionalDependencies, as
// published: npm takes the host's from its tarball and skips the seven others (other
// OS or CPU; and offline, not fetchable either).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkg, root, targets } from './targets.mjs';
import { npmCli } from './toolchain.mjs';

const require = createRequire(import.meta.url);
const host = require('../lib/native.cjs').hostTriple();
const work = mkdtempSync(join(tmpdir(), 'tfx-fresh-install-'));
const keep = process.argv.includes('--keep');

function check(condition, message) {
  if (!condition) throw new Error(`fresh-install: ${message}`);
}

try {
  // 1. The tarballs (each package's prepack guard runs here).
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const dir of [root, join(root, 'npm', host), join(root, 'compat', 'better-sqlite3')]) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', tarballs], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  // What `napi pre-publish` does before `npm publish`: the main package gets its
  // optionalDependencies (every platform package, same version). Re-pack it so.
  const mainTarball = `${pkg.name}-${pkg.version}.tgz`;
  const stage = join(work, 'stage');
  mkdirSync(stage);
  execFileSync('tar', ['-xzf', join(tarballs, mainTarball), '-C', stage]);
  const manifestPath = join(stage, 'package', 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.optionalDependencies = Object.fromEntries(targets.map((t) => [t.pkg, pkg.version]));
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  rmSync(join(tarballs, mainTarball));
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', tarballs], { cwd: join(stage, 'package'), stdio: ['ignore', 'ignore', 'inherit'] });
  const packed = readdirSync(tarballs).sort();
  check(packed.length === 3 && packed.includes(mainTarball), `expected three tarballs, got ${packed}`);
  const alias = packed.find((f) => f.startsWith('triflux-better-sqlite3-'));

  // 2. A PATH with node and npm only, and proof that the build tools are not on it.
  const bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync(npmCli(), join(bin, 'npm'));
  const env = { PATH: bin, HOME: join(work, 'home'), npm_config_cache: join(work, 'npm-cache'), npm_config_update_notifier: 'false' };
  for (const tool of ['cargo', 'rustc', 'cc', 'gcc', 'make', 'python3', 'python']) {
    const found = spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { env });
    check(found.status !== 0, `${tool} is reachable from the sandbox PATH`);
  }

  // 3. An empty project; install both tarballs with nothing from the registry.
  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'fresh-install-smoke', version: '1.0.0', private: true }));
  const specs = packed.map((f) => (f === alias ? `better-sqlite3@file:${join(tarballs, f)}` : join(tarballs, f)));
  const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', ...specs], {
    cwd: project,
    env,
    encoding: 'utf8',
  });
  check(install.status === 0, `npm install failed:\n${install.stdout}${install.stderr}`);
  const installed = readdirSync(join(project, 'node_modules')).filter((d) => d.startsWith('triflux-native-store')).sort();
  check(
    JSON.stringify(installed) === JSON.stringify([pkg.name, `${pkg.name}-${host}`]),
    `installed ${installed.join(', ')}`,
  );
  const aliased = JSON.parse(readFileSync(join(project, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8'));
  check(aliased.name === 'triflux-better-sqlite3', `node_modules/better-sqlite3 is ${aliased.name}`);

  // 4. The smokes: the store, the facade through the better-sqlite3 subpath, version().
  const expectBinary = `node_modules/${pkg.name}-${host}/${pkg.napi.binaryName}.${host}.node`;
  writeFileSync(join(project, 'smoke.mjs'), `
    import assert from 'node:assert/strict';
    import { createStore, version } from 'triflux-native-store';
    import Database from 'triflux-native-store/better-sqlite3';
    import AliasedBetterSqlite3 from 'better-sqlite3';
    assert.equal(AliasedBetterSqlite3, Database);
    const v = version();
    assert.equal(v.version, ${JSON.stringify(pkg.version)});
    assert.equal(v.target, ${JSON.stringify(host)});
    assert.ok(v.binary.endsWith(${JSON.stringify(expectBinary)}), v.binary);
    const store = createStore('data/esm/hub.db');
    store.registerAgent({ agent_id: 'a1', cli: 'codex' });
    assert.equal(store.getAgent('a1').status, 'online');
    const ro = new Database('data/esm/hub.db', { readonly: true });
    assert.equal(ro.prepare('SELECT count(*) FROM agents').pluck().get(), 1);
    ro.close();
    store.close();
    console.log('esm smoke ok: ' + JSON.stringify(v));
  `);
  writeFileSync(join(project, 'smoke.cjs'), `
    const assert = require('node:assert/strict');
    const { createStore, Database, SqliteError } = require('triflux-native-store');
    const BetterSqlite3 = require('better-sqlite3'); // the npm alias, as hub/bridge.mjs imports it
    assert.equal(BetterSqlite3, Database);
    assert.equal(BetterSqlite3.SqliteError, SqliteError);
    const store = createStore('data/cjs/hub.db');
    const job = store.createAssign({ supervisor_agent: 's', worker_agent: 'w', task: 't' });
    assert.equal(store.getAssign(job.job_id).status, 'queued');
    assert.throws(() => store.db.prepare('SELECT * FROM nowhere'), SqliteError);
    store.close();
    console.log('cjs smoke ok');
  `);
  writeFileSync(join(project, 'smoke.mts'), `
    import { createStore, type AgentRow, type Store } from 'triflux-native-store';
    import Database from 'better-sqlite3';
    const store: Store = createStore('data/ts/hub.db');
    store.registerAgent({ agent_id: 'a1', cli: 'codex', heartbeat_ttl_ms: 1000 });
    const agent: AgentRow | null = store.getAgent('a1');
    const db = new Database('data/ts/hub.db', { readonly: true });
    const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM agents').get();
    db.close();
    store.close();
    if (agent?.agent_id !== 'a1' || count?.n !== 1) throw new Error('ts smoke: unexpected ' + JSON.stringify([agent, count]));
    console.log('ts smoke ok');
  `);
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    // Node's types from this repository (a hub has its own @types/node; none is installed here).
    compilerOptions: {
      strict: true,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
      outDir: 'dist',
    },
    files: ['smoke.mts'],
  }));
  const tsc = require.resolve('typescript/bin/tsc');
  const steps = [['node', ['smoke.mjs']], ['node', ['smoke.cjs']], ['node', [tsc, '-p', '.']], ['node', ['dist/smoke.mjs']]];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { cwd: project, env, encoding: 'utf8' });
    process.stdout.write(r.stdout);
    check(r.status === 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  }
  console.log(`fresh-install: ok (${packed.join(', ')} installed with PATH=node,npm only)`);
} finally {
  if (keep) console.log(`fresh-install: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
