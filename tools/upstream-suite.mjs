// better-sqlite3's own test suite (its `test/` folder at a tag), run with mocha against this
// package's better-sqlite3 entry: a manual check, since CI has no copy of that repository.
//
//   npm run test:upstream -- <better-sqlite3 checkout or bare mirror> [tag] [--reference] [--keep] [--grep text]
//
// The suite is extracted into a temporary folder (never into this repository) whose own
// `index.js` is what the suite's `require('../.')` loads: this package's
// `better-sqlite3.cjs`, or with `--reference` the better-sqlite3 built for the running Node
// (tools/reference.mjs), to see which failures are the suite's own on this machine.
// `build/Release/test_extension.node` is built from the tag's `deps/test_extension.c` with
// the machine's C compiler. The exit status is 0 when every failure is an expected one:
// `nativeBinding`, which loads better-sqlite3's own V8 addon.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { referenceDir, referenceMissing } from './reference.mjs';

const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));
/** Tests that cannot pass on a package other than better-sqlite3's own build. */
const EXPECTED_FAILURES = [/"nativeBinding" option/];

function usage(message) {
  if (message) console.error(message);
  console.error('usage: node tools/upstream-suite.mjs <better-sqlite3 checkout or mirror> [tag, default v12.11.1] [--reference] [--keep] [--grep text]');
  process.exit(2);
}

function parseArgs(argv) {
  const options = { source: null, tag: 'v12.11.1', reference: false, keep: false, grep: null };
  const positional = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--reference') options.reference = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--grep') options.grep = argv[(i += 1)] ?? usage('--grep needs a text');
    else if (arg.startsWith('--')) usage(`unknown option ${arg}`);
    else positional.push(arg);
  }
  if (positional.length < 1 || positional.length > 2) usage();
  options.source = resolve(positional[0]);
  if (positional[1]) options.tag = positional[1];
  return options;
}

/** The tag's `test/` and test extension source, extracted into `dir`. */
function extract(source, tag, dir) {
  const archive = spawnSync('git', ['-C', source, 'archive', '--format=tar', tag, 'test', 'deps/test_extension.c'], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (archive.status !== 0) throw new Error(`git archive ${tag} failed: ${String(archive.stderr).trim()}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${String(untar.stderr).trim()}`);
}

/** The suite's test extension (35.database.load-extension.js, 42.integrity.js). */
function buildExtension(dir) {
  const out = join(dir, 'build', 'Release', 'test_extension.node');
  mkdirSync(dirname(out), { recursive: true });
  const flags = process.platform === 'darwin' ? ['-dynamiclib'] : ['-shared', '-fPIC'];
  const cc = process.env.CC || 'cc';
  const r = spawnSync(cc, [...flags, '-I', join(repoRoot, 'deps', 'sqlite3'), '-o', out, join(dir, 'deps', 'test_extension.c')], {
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0) {
    console.warn(`upstream-suite: could not build the test extension (${r.error?.code ?? r.stderr.split('\n')[0]}); its tests will fail`);
  }
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  let entry = join(repoRoot, 'better-sqlite3.cjs');
  if (options.reference) {
    const dir = referenceDir();
    if (!dir) throw new Error(referenceMissing());
    entry = dir;
  }
  const dir = mkdtempSync(join(tmpdir(), 'upstream-suite-'));
  try {
    extract(options.source, options.tag, dir);
    buildExtension(dir);
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'upstream-suite', private: true, main: 'index.js' })}\n`);
    writeFileSync(join(dir, 'index.js'), `'use strict';\nmodule.exports = require(${JSON.stringify(entry)});\n`);
    const report = join(dir, 'report.json');
    const mocha = join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = [mocha, '--exit', '--slow=75', '--timeout=5000', '--reporter', 'json', '--reporter-option', `output=${report}`];
    if (options.grep) args.push('--grep', options.grep);
    const run = spawnSync(process.execPath, args, {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      // The suite's own requires (chai, fs-extra) come from this package's devDependencies.
      env: { ...process.env, NODE_PATH: join(repoRoot, 'node_modules') },
    });
    if (run.signal) throw new Error(`mocha was killed by ${run.signal}`);
    const { stats, failures } = JSON.parse(readFileSync(report, 'utf8'));
    const against = options.reference ? `better-sqlite3 (${entry})` : 'triflux-native-store';
    console.log(`better-sqlite3 ${options.tag}'s suite against ${against} on Node ${process.versions.node}:`);
    console.log(`  ${stats.tests} tests, ${stats.passes} passed, ${stats.failures} failed, ${stats.pending} pending`);
    let unexpected = 0;
    for (const failure of failures) {
      const expected = EXPECTED_FAILURES.some((pattern) => pattern.test(failure.fullTitle));
      if (!expected) unexpected += 1;
      console.log(`  ${expected ? 'expected' : 'FAILED'}: ${failure.fullTitle}`);
      if (!expected) console.log(`    ${String(failure.err.message).split('\n').join('\n    ')}`);
    }
    if (options.keep) console.log(`  kept in ${dir}`);
    return unexpected === 0 ? 0 : 1;
  } finally {
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
