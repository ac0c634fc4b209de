// The release targets, read from package.json `napi.targets`, with the names napi-rs
// gives them: npm/<dir>/ holds the package <pkg>, whose one file is <file>.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const ARCH = { x86_64: 'x64', aarch64: 'arm64' };
const SYSTEM = {
  'unknown-linux-gnu': { os: 'linux', abi: 'gnu', libc: 'glibc' },
  'unknown-linux-musl': { os: 'linux', abi: 'musl', libc: 'musl' },
  'apple-darwin': { os: 'darwin', abi: '', libc: null },
  'pc-windows-msvc': { os: 'win32', abi: 'msvc', libc: null },
};

/** One napi target triple (e.g. aarch64-unknown-linux-musl) described. */
export function describe(rust) {
  const cut = rust.indexOf('-');
  const cpu = ARCH[rust.slice(0, cut)];
  const system = SYSTEM[rust.slice(cut + 1)];
  if (!cpu || !system) throw new Error(`tools/targets.mjs: unknown target ${rust}`);
  const dir = [system.os, cpu, system.abi].filter(Boolean).join('-');
  return {
    rust,
    dir,
    os: system.os,
    cpu,
    libc: system.libc,
    pkg: `${pkg.name}-${dir}`,
    file: `${pkg.napi.binaryName}.${dir}.node`,
  };
}

export const targets = pkg.napi.targets.map(describe);
