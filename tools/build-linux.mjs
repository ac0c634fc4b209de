// `npm run build:linux [target…]`: builds the Linux release binaries into their
// npm/<triple>/ packages with cargo-zigbuild, the glibc ones against glibc 2.17 (the
// oldest glibc Node 20 itself still runs on: RHEL/CentOS 7 and up), all stripped
// (Cargo.toml's release profile). zig and cargo-zigbuild come from PyPI into a
// project-local virtualenv (.tools/zig), so a fresh machine needs only python3, cargo
// and rustup. Targets default to every Linux target in package.json; rustup adds a
// missing std.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { maxGlibc, GLIBC_LIMIT, compareVersions } from './check-glibc.mjs';
import { describe, root, targets } from './targets.mjs';

const toolsDir = join(root, '.tools', 'zig');
const requirements = join(root, 'tools', 'zig-requirements.txt');

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
  }
}

/** zig + cargo-zigbuild at the pinned versions, reinstalled when the pins change. */
function ensureZig() {
  const bin = join(toolsDir, 'bin');
  const stamp = join(toolsDir, 'requirements.stamp');
  const wanted = readFileSync(requirements, 'utf8');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    console.log(`build:linux: installing ${wanted.trim().split('\n').join(', ')} into .tools/zig`);
    run('python3', ['-m', 'venv', toolsDir]);
    run(join(bin, 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', requirements]);
    // The ziglang wheel has no `zig` command; napi build -x and cargo-zigbuild look for one.
    writeFileSync(join(bin, 'zig'), '#!/bin/sh\nexec "$(dirname "$0")/python" -m ziglang "$@"\n');
    chmodSync(join(bin, 'zig'), 0o755);
    writeFileSync(stamp, wanted);
  }
  return bin;
}

function ensureRustTarget(rust) {
  const installed = execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' }).split('\n');
  if (installed.includes(rust)) return;
  const added = spawnSync('rustup', ['target', 'add', rust], { stdio: 'inherit' });
  if (added.status !== 0) {
    throw new Error(`the Rust standard library for ${rust} is not installed and \`rustup target add ${rust}\` failed: ` +
      'this machine cannot build that target (the release workflow builds it)');
  }
}

const wanted = process.argv.slice(2);
const linux = (wanted.length > 0 ? wanted.map(describe) : targets).filter((t) => t.os === 'linux');
if (linux.length === 0) throw new Error('build:linux: no Linux target given');

const bin = ensureZig();
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const napi = join(root, 'node_modules', '.bin', 'napi');
for (const t of linux) {
  ensureRustTarget(t.rust);
  // cargo-zigbuild reads a glibc version from the target suffix; musl is static libc.
  const zigTarget = t.libc === 'glibc' ? `${t.rust}.2.17` : t.rust;
  const staging = join(root, 'target', 'npm-build', t.dir);
  mkdirSync(staging, { recursive: true });
  console.log(`build:linux: ${zigTarget} -> npm/${t.dir}/${t.file}`);
  run(napi, ['build', '--platform', '--release', '--target', zigTarget, '-x', '--no-js', '--output-dir', staging], { env });
  const out = join(root, 'npm', t.dir, t.file);
  copyFileSync(join(staging, t.file), out);
  let note = '';
  if (t.libc === 'glibc') {
    const max = maxGlibc(out);
    if (compareVersions(max, GLIBC_LIMIT) > 0) throw new Error(`${out} needs GLIBC_${max}, above ${GLIBC_LIMIT}`);
    note = `, needs glibc ${max}`;
  }
  console.log(`build:linux: npm/${t.dir}/${t.file}: ${statSync(out).size} bytes${note}`);
}
