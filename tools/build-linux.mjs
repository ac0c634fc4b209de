// `npm run build:linux [target…]`: builds the Linux release binaries into their
// npm/<triple>/ packages with cargo-zigbuild, the glibc ones against glibc 2.17 (the
// oldest glibc Node 20 itself still runs on: RHEL/CentOS 7 and up), all stripped
// (Cargo.toml's release profile). zig and cargo-zigbuild come from PyPI into a
// project-local virtualenv (.tools/zig), so a fresh machine needs only python3, cargo
// and rustup. Targets default to every Linux target in package.json; rustup adds a
// missing std.
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { maxGlibc, GLIBC_LIMIT, compareVersions } from './check-glibc.mjs';
import { describe, root, targets } from './targets.mjs';
import { ensureRustTarget, ensureZig, napi, run, rustflags } from './toolchain.mjs';

/** Installs what a Linux build needs (zig, cargo-zigbuild, the Rust std): before any build starts. */
export function prepareLinux(t) {
  ensureZig();
  ensureRustTarget(t.rust);
}

/**
 * One Linux target's napi build, not started: `args` for napi, its `env`, and `finish()`,
 * which copies the binary into npm/<triple>/, checks it and returns its path. `targetDir`
 * is cargo's target directory (default: the project's target/).
 */
export function linuxBuild(t, targetDir) {
  const env = { ...process.env, PATH: `${ensureZig()}:${process.env.PATH}`, RUSTFLAGS: rustflags() };
  // cargo-zigbuild reads a glibc version from the target suffix; musl is static libc.
  const zigTarget = t.libc === 'glibc' ? `${t.rust}.2.17` : t.rust;
  const staging = join(root, 'target', 'npm-build', t.dir);
  mkdirSync(staging, { recursive: true });
  const args = ['build', '--platform', '--release', '--target', zigTarget, '-x', '--no-js', '--output-dir', staging];
  if (targetDir) args.push('--target-dir', targetDir);
  return {
    what: `build:linux: ${zigTarget} -> npm/${t.dir}/${t.file}`,
    args,
    env,
    finish() {
      const out = join(root, 'npm', t.dir, t.file);
      copyFileSync(join(staging, t.file), out);
      let note = '';
      if (t.libc === 'glibc') {
        const max = maxGlibc(out);
        if (compareVersions(max, GLIBC_LIMIT) > 0) throw new Error(`${out} needs GLIBC_${max}, above ${GLIBC_LIMIT}`);
        note = `, needs glibc ${max}`;
      }
      console.log(`build:linux: npm/${t.dir}/${t.file}: ${statSync(out).size} bytes${note}`);
      return out;
    },
  };
}

/** Builds one Linux target into npm/<triple>/; returns the binary's path. */
export function buildLinux(t, targetDir) {
  prepareLinux(t);
  const build = linuxBuild(t, targetDir);
  console.log(build.what);
  run(napi, build.args, { env: build.env });
  return build.finish();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  const linux = (wanted.length > 0 ? wanted.map(describe) : targets).filter((t) => t.os === 'linux');
  if (linux.length === 0) throw new Error('build:linux: no Linux target given');
  for (const t of linux) buildLinux(t);
}
