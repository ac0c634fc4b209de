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
import { ensureRustTarget, ensureZig, run, rustflags } from './toolchain.mjs';

/** Builds one Linux target into npm/<triple>/; returns the binary's path. */
export function buildLinux(t) {
  const bin = ensureZig();
  ensureRustTarget(t.rust);
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, RUSTFLAGS: rustflags() };
  // cargo-zigbuild reads a glibc version from the target suffix; musl is static libc.
  const zigTarget = t.libc === 'glibc' ? `${t.rust}.2.17` : t.rust;
  const staging = join(root, 'target', 'npm-build', t.dir);
  mkdirSync(staging, { recursive: true });
  console.log(`build:linux: ${zigTarget} -> npm/${t.dir}/${t.file}`);
  run(join(root, 'node_modules', '.bin', 'napi'), ['build', '--platform', '--release', '--target', zigTarget, '-x', '--no-js', '--output-dir', staging], { env });
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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  const linux = (wanted.length > 0 ? wanted.map(describe) : targets).filter((t) => t.os === 'linux');
  if (linux.length === 0) throw new Error('build:linux: no Linux target given');
  for (const t of linux) buildLinux(t);
}
