// Bun and Deno, the runtimes besides Node that the package is tested on, installed from
// the runtimes' own npm packages (each publishes its linux-x64 build there) into
// .tools/runtimes/<name>-<version>/ with `npm pack`, as tools/platform-tools.mjs installs
// Node's builds. The versions are pinned here: the newest each package had when last
// bumped; raise them here to test a newer one.
//   node tools/runtimes/install.mjs [bun] [deno]     install (both by default)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from '../targets.mjs';

export const RUNTIMES = {
  bun: { package: '@oven/bun-linux-x64', version: '1.4.5', exe: join('bin', 'bun'), commands: ['bun', 'bunx'] },
  deno: { package: '@deno/linux-x64-glibc', version: '2.9.6', exe: 'deno', commands: ['deno'] },
};

const runtimesDir = join(root, '.tools', 'runtimes');

/**
 * Where runtime `name` is (or would be) installed: { name, version, package, dir, exe, bin,
 * commands } (`commands`: what its own installer puts on PATH, all in `bin`).
 */
export function runtimeOf(name) {
  const spec = RUNTIMES[name];
  if (!spec) throw new Error(`runtimes: unknown runtime ${name} (known: ${Object.keys(RUNTIMES).join(', ')})`);
  const dir = join(runtimesDir, `${name}-${spec.version}`);
  const exe = join(dir, spec.exe);
  return { name, version: spec.version, package: spec.package, dir, exe, bin: join(exe, '..'), commands: spec.commands };
}

/** Runtime `name` installed from its npm package when missing; returns runtimeOf(name). */
export function ensureRuntime(name) {
  const runtime = runtimeOf(name);
  if (existsSync(runtime.exe)) return runtime;
  // Both packages hold a linux-x64 glibc build only, the machine .ci/run runs on.
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`runtimes: ${runtime.package} runs on linux-x64 only, not ${process.platform}-${process.arch}`);
  }
  const download = join(runtimesDir, 'download');
  mkdirSync(download, { recursive: true });
  console.log(`runtimes: npm pack ${runtime.package}@${runtime.version}`);
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', download, `${runtime.package}@${runtime.version}`], { cwd: download, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);
  const unpack = join(download, `${name}-${runtime.version}`);
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  execFileSync('tar', ['xzf', join(download, tarball), '-C', unpack]);
  rmSync(runtime.dir, { recursive: true, force: true });
  cpSync(join(unpack, 'package'), runtime.dir, { recursive: true });
  rmSync(unpack, { recursive: true, force: true });
  rmSync(join(download, tarball), { force: true });
  if (!existsSync(runtime.exe)) throw new Error(`runtimes: ${runtime.package}@${runtime.version} has no ${runtime.exe}`);
  // Bun's own installer puts `bunx` beside `bun` as a link to it (bun reads its name).
  if (name === 'bun') symlinkSync('bun', join(runtime.bin, 'bunx'));
  return runtime;
}

/** `<runtime> --version`'s first line, to show which build ran. */
export function runtimeVersion(runtime) {
  return execFileSync(runtime.exe, ['--version'], { encoding: 'utf8' }).split('\n')[0].trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  for (const name of names.length > 0 ? names : Object.keys(RUNTIMES)) {
    const runtime = ensureRuntime(name);
    console.log(`runtimes: ${name} ${runtime.version} in ${join('.tools', 'runtimes', `${name}-${runtime.version}`)} (--version: ${runtimeVersion(runtime)})`);
  }
}
