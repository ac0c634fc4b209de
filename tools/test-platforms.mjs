// `npm run test:platforms`: the whole node suite (__test__/) on every binary this Linux
// x64 machine can execute, and the checks of those it cannot, then one table:
//   linux-x64-gnu    native, this machine's Node and Node's own linux-x64 builds of 22, 24
//                    and 26 (tools/nodes.mjs), each with better-sqlite3 built for it
//   linux-arm64-gnu  qemu (binfmt), Node's own linux-arm64 build, better-sqlite3 cross-built
//   win32-x64        Wine, Node's own win-x64 build, the windows-gnu test build of build:cross
//   darwin-*         checked: Mach-O facts (tools/check-cross.mjs)
//   linux-*-musl     checked: ELF facts (no musl Node is run here)
// The binaries come from `npm run build:cross`. Options:
//   --only=<target>[,<target>…]   just these rows
//   --node=<major>[,<major>…]     Node majors to run (default: this Node's and 22, 24, 26
//                                 natively, this Node's under emulation)
//   --core                        only the golden-trace and fixture replays and the store's
//                                 core suites (what .ci/run runs under emulation); under
//                                 emulation these replay the v6 traces and every fixture,
//                                 the whole run every version's traces (REPLAY_ALL_SCHEMAS)
// Exits 1 when a run has a failed test or a check fails.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { windowsTest } from './build-cross.mjs';
import { checkDarwin, checkMusl } from './check-cross.mjs';
import { runSuite, stage, stopWine, tapSummary } from './platform-runs.mjs';
import { hostNode, SUPPORTED_MAJORS } from './nodes.mjs';
import { betterSqlite3Dir, ensureBetterSqlite3, ensureBinfmt, ensureNode, ensurePackages, ensureWinePrefix, nodeVersion } from './platform-tools.mjs';
import { root, targets } from './targets.mjs';

const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3).split(',');
const only = option('only');
const ownMajor = process.versions.node.split('.')[0];
const majors = option('node') ?? [ownMajor];
const nativeMajors = option('node') ?? [...new Set([ownMajor, ...SUPPORTED_MAJORS])];
const want = (dir) => !only || only.includes(dir);
/** The replays of every golden trace and fixture, and the suites of the store's core. */
const CORE = ['replay', 'foundation', 'behaviours', 'hub-uses', 'fallback', 'windows-paths'].map((n) => `__test__/${n}.test.mjs`);
// Named files, not the folder: Node 22's --test takes files and globs, Node 20's no globs.
const ALL = readdirSync(join(root, '__test__')).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => `__test__/${f}`);
const tests = process.argv.includes('--core') ? CORE : ALL;
// Read by __test__/replay.test.mjs under emulation (the suites inherit this environment).
if (!process.argv.includes('--core')) process.env.REPLAY_ALL_SCHEMAS = '1';

const byDir = Object.fromEntries(targets.map((t) => [t.dir, t]));
const binaryOf = (t) => join(root, 'npm', t.dir, t.file);
const rows = [];
let bad = 0;

function size(file) {
  return existsSync(file) ? `${(statSync(file).size / 1048576).toFixed(2)} MB` : 'missing';
}

function requireBinary(file, dir) {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build:cross -- ${dir}\` first`);
}

async function suite({ dir, label, how, nodeExe, binary, triple, betterSqlite3, referenceFailure }) {
  requireBinary(binary, dir);
  const staged = stage(label, { binary, triple, betterSqlite3, referenceFailure });
  console.log(`test:platforms: ${label}: node --test ${tests === ALL ? '__test__/*.test.mjs' : tests.join(' ')} (${how}) …`);
  const r = await runSuite(staged, { how, nodeExe, label, tests });
  const s = tapSummary(r.text);
  const ok = r.code === 0 && s.failed === 0 && s.passed > 0;
  if (!ok) bad++;
  rows.push({
    target: label,
    how,
    size: size(binary),
    result: Number.isNaN(s.tests) ? `no summary (exit ${r.code})` : `${s.passed} / ${s.failed} / ${s.skipped}`,
    time: `${Math.round(r.seconds)} s`,
    notes: [...s.failures.map((f) => `FAILED: ${f}`), ...s.skips.map((x) => `skipped "${x.name}": ${x.reason}`), ...(ok ? [] : [`log: ${r.log.slice(root.length + 1)}`])],
  });
  console.log(`test:platforms: ${label}: ${rows.at(-1).result} (passed / failed / skipped) in ${rows.at(-1).time}`);
}

function checked(t, checks) {
  const started = Date.now();
  const file = binaryOf(t);
  requireBinary(file, t.dir);
  const results = checks(file, t);
  const failedChecks = results.filter((c) => !c.ok);
  if (failedChecks.length > 0) bad++;
  rows.push({
    target: t.dir,
    how: 'checked only',
    size: size(file),
    result: `${results.length - failedChecks.length} / ${failedChecks.length} / 0 checks`,
    time: `${((Date.now() - started) / 1000).toFixed(1)} s`,
    notes: results.map((c) => `${c.ok ? 'ok' : 'FAILED'}: ${c.what}`),
  });
}

async function main() {
  const host = byDir['linux-x64-gnu'];
  if (want('linux-x64-gnu')) {
    for (const major of nativeMajors) {
      const node = hostNode(major);
      const label = major === ownMajor ? 'linux-x64-gnu' : `linux-x64-gnu node${major}`;
      // Where better-sqlite3 does not build for that Node, its differential tests are
      // skipped there with the compiler's reason (tools/reference.mjs); the rest runs.
      const reference = node.betterSqlite3;
      const betterSqlite3 = reference === undefined ? join(root, 'node_modules', 'better-sqlite3') : (reference.error ? null : reference);
      const referenceFailure = reference?.error && { dir: betterSqlite3Dir('x64', node.abi), reason: reference.error };
      await suite({ dir: host.dir, label, how: 'native', nodeExe: node.exe, binary: binaryOf(host), triple: host.dir, betterSqlite3, referenceFailure });
    }
  }
  if (want('linux-arm64-gnu')) {
    ensurePackages('arm64');
    ensureBinfmt();
    const t = byDir['linux-arm64-gnu'];
    for (const major of majors) {
      const nodeExe = ensureNode('linux-arm64', nodeVersion('linux-arm64', major));
      const betterSqlite3 = ensureBetterSqlite3(dirname(dirname(nodeExe)), 'arm64');
      const label = majors.length > 1 ? `linux-arm64-gnu node${major}` : 'linux-arm64-gnu';
      await suite({ dir: t.dir, label, how: 'qemu', nodeExe, binary: binaryOf(t), triple: t.dir, betterSqlite3 });
    }
  }
  if (want('win32-x64')) {
    ensurePackages('wine');
    ensureWinePrefix();
    try {
      for (const major of majors) {
        const nodeExe = ensureNode('win-x64', nodeVersion('win-x64', major));
        const label = majors.length > 1 ? `win32-x64 node${major}` : 'win32-x64';
        await suite({ dir: windowsTest.dir, label, how: 'wine', nodeExe, binary: windowsTest.path, triple: 'win32-x64-msvc', betterSqlite3: null });
      }
    } finally {
      stopWine();
    }
  }
  ensurePackages('elf');
  for (const t of targets) {
    if (!want(t.dir)) continue;
    if (t.os === 'darwin') checked(t, checkDarwin);
    else if (t.libc === 'musl') checked(t, checkMusl);
  }
  for (const t of targets.filter((x) => x.os === 'win32')) {
    if (want(t.dir)) rows.push({ target: t.dir, how: 'release workflow only', size: '-', result: '-', time: '-', notes: ['MSVC builds need Windows (the release workflow builds and tests them)'] });
  }
  print();
  process.exit(bad === 0 ? 0 : 1);
}

function print() {
  const head = ['target', 'how', 'binary size', 'passed / failed / skipped', 'time'];
  const cells = rows.map((r) => [r.target, r.how, r.size, r.result, r.time]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(head)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of cells) console.log(line(c));
  console.log('');
  for (const r of rows) for (const n of r.notes) console.log(`  ${r.target}: ${n}`);
  // One closing line over every run and check, in the plain "N passed, N failed" form.
  const totals = rows.reduce((sum, r) => {
    const m = /^(\d+) \/ (\d+) \/ (\d+)/.exec(r.result);
    return m ? sum.map((x, i) => x + Number(m[i + 1])) : sum;
  }, [0, 0, 0]);
  console.log(`\nplatforms: ${totals[0]} passed, ${totals[1] + (bad > 0 && totals[1] === 0 ? bad : 0)} failed, ${totals[2]} skipped`);
}

await main();
