// `npm run build:cross [triple…]`: every binary this Linux x64 machine can build.
//   linux-*          build:linux (cargo-zigbuild, glibc 2.17), into npm/<triple>/
//   darwin-x64/arm64 cargo-zigbuild without an SDK; minimum macOS 10.13 / 11.0 (napi-rs's
//                    floors), install name @rpath/<file>, stripped with llvm-strip (which
//                    re-signs the arm64 binary's ad-hoc signature), into npm/<triple>/
//   win32-x64-gnu    a TEST build (x86_64-pc-windows-gnu, mingw-w64) for running the suite
//                    under Wine; it goes to target/cross/, never into npm/win32-x64-msvc/:
//                    the release workflow builds the MSVC binary that ships.
// Triples default to all of them. Tools come from tools/toolchain.mjs and
// tools/platform-tools.mjs (installed when missing).
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLinux } from './build-linux.mjs';
import { checkDarwin, checkWindows, MIN_MACOS } from './check-cross.mjs';
import { ensureLibnode, ensureNode, ensurePackages } from './platform-tools.mjs';
import { root, targets } from './targets.mjs';
import { ensureRustTarget, ensureZig, run, rustflags } from './toolchain.mjs';

const napi = join(root, 'node_modules', '.bin', 'napi');

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

export function buildDarwin(t) {
  ensurePackages('macho');
  const bin = ensureZig();
  ensureRustTarget(t.rust);
  const flags = rustflags('-C', `link-arg=-Wl,-install_name,@rpath/${t.file}`);
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, MACOSX_DEPLOYMENT_TARGET: MIN_MACOS[t.cpu], RUSTFLAGS: flags };
  const staging = join(root, 'target', 'npm-build', t.dir);
  mkdirSync(staging, { recursive: true });
  console.log(`build:cross: ${t.rust} (macOS ${MIN_MACOS[t.cpu]}+) -> npm/${t.dir}/${t.file}`);
  run(napi, ['build', '--platform', '--release', '--target', t.rust, '-x', '--no-js', '--output-dir', staging], { env });
  const out = join(root, 'npm', t.dir, t.file);
  // zig's Mach-O linker keeps the symbol table (rustc's strip step needs Apple's strip).
  run('llvm-strip', ['-o', out, join(staging, t.file)]);
  failed(out, checkDarwin(out, t));
  return out;
}

export function buildWindowsTest() {
  ensurePackages('mingw');
  ensureRustTarget(windowsTest.rust);
  const env = {
    ...process.env,
    LIBNODE_PATH: ensureLibnode(ensureNode('win-x64')),
    RUSTFLAGS: rustflags(),
  };
  const staging = join(root, 'target', 'cross', windowsTest.dir);
  mkdirSync(staging, { recursive: true });
  console.log(`build:cross: ${windowsTest.rust} (test build for Wine) -> target/cross/${windowsTest.dir}/${windowsTest.file}`);
  run(napi, ['build', '--platform', '--release', '--target', windowsTest.rust, '--no-js', '--output-dir', staging], { env });
  failed(windowsTest.path, checkWindows(windowsTest.path));
  return windowsTest.path;
}

/** What build:cross builds here: the Linux and macOS targets and the Windows test build. */
export const crossTargets = [...targets.filter((t) => t.os === 'linux' || t.os === 'darwin'), windowsTest];

export function buildCross(t) {
  if (t.os === 'linux') return buildLinux(t);
  if (t.os === 'darwin') return buildDarwin(t);
  return buildWindowsTest();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  const chosen = wanted.length === 0 ? crossTargets : wanted.map((w) => {
    const t = crossTargets.find((x) => x.dir === w || x.rust === w);
    if (!t) throw new Error(`build:cross: ${w} cannot be built here (choose from ${crossTargets.map((x) => x.dir).join(', ')})`);
    return t;
  });
  const built = chosen.map((t) => {
    const started = Date.now();
    const file = buildCross(t);
    return { t, file, seconds: Math.round((Date.now() - started) / 1000) };
  });
  console.log('\nbuild:cross:');
  for (const { t, file, seconds } of built) {
    console.log(`  ${t.dir.padEnd(18)} ${String(statSync(file).size).padStart(9)} bytes  ${String(seconds).padStart(4)} s  ${file.slice(root.length + 1)}`);
  }
}
