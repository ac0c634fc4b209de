// `npm run build:cross [triple…]`: every binary this Linux x64 machine can build.
//   linux-*          build:linux (cargo-zigbuild, glibc 2.17), into npm/<triple>/
//   darwin-x64/arm64 cargo-zigbuild without an SDK; minimum macOS 10.13 / 11.0 (napi-rs's
//                    floors), install name @rpath/<file>, stripped with llvm-strip (which
//                    re-signs the arm64 binary's ad-hoc signature), into npm/<triple>/
//   win32-x64-gnu    a TEST build (x86_64-pc-windows-gnu, mingw-w64) for running the suite
//                    under Wine; it goes to target/cross/, never into npm/win32-x64-msvc/:
//                    the release workflow builds the MSVC binary that ships.
// Triples default to all of them. Tools come from tools/toolchain.mjs and
// tools/platform-tools.mjs, installed when missing, all before the first build starts
// (`--install-only` installs them and builds nothing).
// `--jobs N` (or BUILD_CROSS_JOBS; default one per core, at most 4; 1 = one after the
// other) builds run at once: much of each is single-threaded (sqlite3.c, the LTO link of
// one codegen unit), so on 2 cores two at once take far less wall time. Cargo locks its
// target directory, so each lane has its own, target/cross-lane-<n>.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { linuxBuild, prepareLinux } from './build-linux.mjs';
import { checkDarwin, checkWindows, MIN_MACOS } from './check-cross.mjs';
import { parseJobs, runLanes, spawnTo } from './lanes.mjs';
import { ensureLibnode, ensureNode, ensurePackages } from './platform-tools.mjs';
import { root, targets } from './targets.mjs';
import { ensureRustTarget, ensureZig, napi, run, rustflags } from './toolchain.mjs';

/** The Windows test build: its name for the loader on win32, where it lives here. */
export const windowsTest = {
  dir: 'win32-x64-gnu',
  rust: 'x86_64-pc-windows-gnu',
  cpu: 'x64',
  os: 'win32',
  file: 'triflux-native-store.win32-x64-gnu.node',
  path: join(root, 'target', 'cross', 'win32-x64-gnu', 'triflux-native-store.win32-x64-gnu.node'),
};

function failed(file, checks) {
  const bad = checks.filter((c) => !c.ok);
  if (bad.length > 0) throw new Error(`${file}:\n${bad.map((c) => `  ${c.what}`).join('\n')}`);
}

/** What one darwin build needs installed (llvm-strip, zig, the Rust std). */
function prepareDarwin(t) {
  ensurePackages('macho');
  ensureZig();
  ensureRustTarget(t.rust);
}

function darwinBuild(t, targetDir) {
  const flags = rustflags('-C', `link-arg=-Wl,-install_name,@rpath/${t.file}`);
  const env = { ...process.env, PATH: `${ensureZig()}:${process.env.PATH}`, MACOSX_DEPLOYMENT_TARGET: MIN_MACOS[t.cpu], RUSTFLAGS: flags };
  const staging = join(root, 'target', 'npm-build', t.dir);
  mkdirSync(staging, { recursive: true });
  return {
    what: `build:cross: ${t.rust} (macOS ${MIN_MACOS[t.cpu]}+) -> npm/${t.dir}/${t.file}`,
    args: ['build', '--platform', '--release', '--target', t.rust, '-x', '--no-js', '--output-dir', staging, '--target-dir', targetDir],
    env,
    finish() {
      const out = join(root, 'npm', t.dir, t.file);
      // zig's Mach-O linker keeps the symbol table (rustc's strip step needs Apple's strip).
      run('llvm-strip', ['-o', out, join(staging, t.file)]);
      failed(out, checkDarwin(out, t));
      return out;
    },
  };
}

/** What the Windows test build needs installed (mingw, the Rust std, Node's win-x64 build for libnode). */
function prepareWindowsTest() {
  ensurePackages('mingw');
  ensureRustTarget(windowsTest.rust);
  ensureLibnode(ensureNode('win-x64'));
}

function windowsTestBuild(targetDir) {
  const env = {
    ...process.env,
    LIBNODE_PATH: ensureLibnode(ensureNode('win-x64')),
    RUSTFLAGS: rustflags(),
  };
  const staging = join(root, 'target', 'cross', windowsTest.dir);
  mkdirSync(staging, { recursive: true });
  return {
    what: `build:cross: ${windowsTest.rust} (test build for Wine) -> target/cross/${windowsTest.dir}/${windowsTest.file}`,
    args: ['build', '--platform', '--release', '--target', windowsTest.rust, '--no-js', '--output-dir', staging, '--target-dir', targetDir],
    env,
    finish() {
      failed(windowsTest.path, checkWindows(windowsTest.path));
      return windowsTest.path;
    },
  };
}

/** What build:cross builds here: the Linux and macOS targets and the Windows test build. */
export const crossTargets = [...targets.filter((t) => t.os === 'linux' || t.os === 'darwin'), windowsTest];

/** Installs what `t`'s build needs; all of it runs before the first build starts. */
export function prepareCross(t) {
  if (t.os === 'linux') return prepareLinux(t);
  if (t.os === 'darwin') return prepareDarwin(t);
  return prepareWindowsTest();
}

/** `t`'s build in cargo target directory `targetDir`, not started: { what, args, env, finish() }. */
export function crossBuild(t, targetDir) {
  if (t.os === 'linux') return linuxBuild(t, targetDir);
  if (t.os === 'darwin') return darwinBuild(t, targetDir);
  return windowsTestBuild(targetDir);
}

const rel = (path) => relative(root, path);

/**
 * Builds `chosen` in `jobs` lanes. Cargo locks its target directory, so each lane has its
 * own (target/cross-lane-<n>). With one lane the builds print as they go; with more each
 * writes to target/cross-logs/<triple>.log, printed whole when it ends.
 */
async function main(chosen, jobs) {
  for (const t of chosen) prepareCross(t);
  // Longest first, so that no lane ends long after the others: the Windows test build
  // takes about twice any other (mingw's gcc compiles sqlite3.c much slower than zig's clang).
  const queue = [...chosen].sort((a, b) => (b === windowsTest) - (a === windowsTest));
  const logs = join(root, 'target', 'cross-logs');
  mkdirSync(logs, { recursive: true });
  const started = Date.now();
  const results = await runLanes(queue, jobs, async (t, lane) => {
    const build = crossBuild(t, join(root, 'target', `cross-lane-${lane}`));
    const log = jobs > 1 ? join(logs, `${t.dir}.log`) : null;
    const begun = Date.now();
    console.log(log ? `${build.what} (lane ${lane}; output in ${rel(log)})` : build.what);
    const why = await spawnTo(napi, build.args, { cwd: root, env: build.env, log });
    if (log) {
      console.log(`\n----- ${t.dir}: napi build output (${why ?? 'ok'}) -----`);
      process.stdout.write(readFileSync(log, 'utf8'));
      console.log(`----- end of ${t.dir} -----\n`);
    }
    if (why) throw new Error(`napi build failed (${why})${log ? `; its output is above and in ${rel(log)}` : ''}`);
    const file = build.finish();
    return { file, seconds: Math.round((Date.now() - begun) / 1000) };
  });
  const wall = Math.round((Date.now() - started) / 1000);

  console.log('\nbuild:cross:');
  const inOrder = [...results].sort((a, b) => chosen.indexOf(a.item) - chosen.indexOf(b.item));
  for (const { item: t, value, error } of inOrder) {
    const state = value ? `${String(statSync(value.file).size).padStart(9)} bytes  ${String(value.seconds).padStart(4)} s  ${rel(value.file)}` : error ? 'FAILED' : 'not built (stopped after a failure)';
    console.log(`  ${t.dir.padEnd(18)} ${state}`);
  }
  console.log(`  wall time ${wall} s, ${Math.min(jobs, chosen.length)} lane(s)`);
  const bad = inOrder.filter((r) => r.error);
  if (bad.length > 0) {
    for (const { item: t, error } of bad) console.error(`\nbuild:cross: ${t.dir} FAILED: ${error.message}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { jobs, rest } = parseJobs(process.argv.slice(2), process.env.BUILD_CROSS_JOBS);
  // --install-only: the tools alone, so that .ci/run can install them while other steps run.
  const installOnly = rest.includes('--install-only');
  const wanted = rest.filter((a) => a !== '--install-only');
  const chosen = wanted.length === 0 ? crossTargets : wanted.map((w) => {
    const t = crossTargets.find((x) => x.dir === w || x.rust === w);
    if (!t) throw new Error(`build:cross: ${w} cannot be built here (choose from ${crossTargets.map((x) => x.dir).join(', ')})`);
    return t;
  });
  if (installOnly) {
    for (const t of chosen) prepareCross(t);
    console.log(`build:cross: the tools for ${chosen.map((t) => t.dir).join(', ')} are installed`);
  } else {
    await main(chosen, jobs);
  }
}
