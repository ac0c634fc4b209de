// How test:platforms runs the node suite (__test__/) on one binary: a staged copy of
// the package with that binary as its local build, run by the Node build of that
// platform (natively, under qemu, or under Wine), its TAP output kept in a log file.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ensureWinePrefix, toolsDir, wineLoader, winePath } from './platform-tools.mjs';
import { root } from './targets.mjs';
import { npmCli } from './toolchain.mjs';

const runsDir = join(toolsDir, 'platforms');

/**
 * A copy of the package's own files (tracked and new, not ignored) in .tools/platforms/<label>/,
 * with node_modules linked to the checkout's except better-sqlite3, which is the given
 * build for that platform (or none, with `referenceFailure` saying why when its build
 * failed), and `binary` as its ./triflux-native-store.<triple>.node.
 */
export function stage(label, { binary, triple, betterSqlite3, referenceFailure }) {
  const dir = join(runsDir, label);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet in git
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(root, file), join(dir, file));
  }
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === 'better-sqlite3' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    symlinkSync(realpathSync(join(root, 'node_modules', entry)), join(modules, entry));
  }
  if (betterSqlite3) cpSync(betterSqlite3, join(modules, 'better-sqlite3'), { recursive: true });
  else {
    // Its JS and sources only (the tests compare SQLite sources with it); no binary loads.
    const source = join(root, 'node_modules', 'better-sqlite3');
    mkdirSync(join(modules, 'better-sqlite3'));
    for (const entry of readdirSync(source).filter((e) => e !== 'build')) cpSync(join(source, entry), join(modules, 'better-sqlite3', entry), { recursive: true });
  }
  if (referenceFailure) {
    // Why better-sqlite3 did not build for this Node, where the copy's tests look for it.
    const stamp = join(dir, relative(root, `${referenceFailure.dir}.failed`));
    mkdirSync(dirname(stamp), { recursive: true });
    writeFileSync(stamp, `${referenceFailure.reason}\n`);
  }
  copyFileSync(binary, join(dir, `triflux-native-store.${triple}.node`));
  // The binary's generated declarations (npm run build writes them beside it; ignored by git).
  if (existsSync(join(root, 'native.d.ts'))) copyFileSync(join(root, 'native.d.ts'), join(dir, 'native.d.ts'));
  return dir;
}

/** npm.cmd / npx.cmd for Wine: the host's npm (plain JS) run by the Windows node.exe. */
function windowsNpm(nodeExe) {
  const bin = join(toolsDir, 'wine', 'bin');
  mkdirSync(bin, { recursive: true });
  const npm = npmCli();
  for (const [name, cli] of [['npm', npm], ['npx', join(dirname(npm), 'npx-cli.js')]]) {
    writeFileSync(join(bin, `${name}.cmd`), `@"${winePath(nodeExe)}" "${winePath(cli)}" %*\r\n`);
  }
  return bin;
}

/**
 * Test folders earlier Wine runs left in the prefix's temp folder: Windows deletes no open
 * file, and a test that ends with its store open leaves its folder (helpers.mjs tempDir).
 */
function clearWineTemp(prefix) {
  const users = join(prefix, 'drive_c', 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    const temp = join(users, user, 'Temp');
    if (!existsSync(temp)) continue;
    for (const entry of readdirSync(temp).filter((e) => e.startsWith('tfx-'))) rmSync(join(temp, entry), { recursive: true, force: true });
  }
}

/** The TAP totals and the skipped tests (name and reason) of one run's log. */
export function tapSummary(text) {
  const total = (key) => Number(text.match(new RegExp(`^# ${key} (\\d+)$`, 'm'))?.[1] ?? NaN);
  const skips = Array.from(text.matchAll(/^\s*ok \d+ - (.*?) # SKIP ?(.*)$/gm), (m) => ({ name: m[1], reason: m[2] }));
  const failures = Array.from(text.matchAll(/^\s*not ok \d+ - (.*?)(?: # .*)?$/gm), (m) => m[1]);
  return { tests: total('tests'), passed: total('pass'), failed: total('fail') + (total('cancelled') || 0), skipped: total('skipped'), skips, failures };
}

/**
 * Runs `node --test __test__/` in `dir` with `how` ('native' | 'qemu' | 'wine') and the
 * given node executable; resolves to { code, log, seconds }. The log is a file: under
 * Wine, node.exe cannot write to a Linux pipe.
 */
export function runSuite(dir, { how, nodeExe, label, tests = ['__test__/'], timeoutMs = 60 * 60 * 1000 }) {
  const log = join(runsDir, `${label}.tap`);
  const out = openSync(log, 'w');
  const env = { ...process.env, TRIFLUX_TEST_EMULATOR: how === 'native' ? '' : how };
  delete env.TRIFLUX_NATIVE_STORE_BINARY;
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH;
  const args = ['--test', '--test-reporter=tap', ...tests];
  let command = nodeExe;
  let argv = args;
  let runEnv = env;
  if (how === 'qemu') {
    // npm's `#!/usr/bin/env node` finds this platform's node first.
    runEnv = { ...env, PATH: `${dirname(nodeExe)}:${env.PATH}` };
  } else if (how === 'wine') {
    const wine = ensureWinePrefix();
    clearWineTemp(wine.WINEPREFIX);
    // npm.cmd, and node.exe itself for npm's lifecycle scripts (`node tools/…`).
    runEnv = { ...env, ...wine, WINEPATH: `${winePath(windowsNpm(nodeExe))};${winePath(dirname(nodeExe))}` };
    command = wineLoader();
    argv = [nodeExe, ...args];
  }
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, argv, { cwd: dir, env: runEnv, stdio: ['ignore', out, out] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      closeSync(out);
      resolve({ code: code ?? signal, log, text: readFileSync(log, 'utf8'), seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** Stops the Wine server this run started (it lingers for a few seconds otherwise). */
export function stopWine() {
  if (!existsSync(join(toolsDir, 'wine', 'prefix'))) return;
  const env = ensureWinePrefix();
  spawnSync(join(dirname(wineLoader()), 'wineserver'), ['-k'], { env, stdio: 'ignore' });
}
