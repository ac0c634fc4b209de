// Reads the GLIBC_x.y symbol versions an ELF file needs (objdump -T, binutils) and fails
// when any is above 2.17, the floor the Linux glibc packages promise.
//   node tools/check-glibc.mjs [file…]   (default: the linux-x64-gnu package's binary)
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, root } from './targets.mjs';

export const GLIBC_LIMIT = '2.17';

export function compareVersions(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return 0;
}

/** The GLIBC versions named in objdump -T output, highest last. */
export function glibcVersions(objdumpText) {
  const found = new Set(Array.from(objdumpText.matchAll(/\bGLIBC_(\d+(?:\.\d+)+)\b/g), (m) => m[1]));
  return [...found].sort(compareVersions);
}

export function maxGlibc(file) {
  const versions = glibcVersions(execFileSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  if (versions.length === 0) throw new Error(`${file}: objdump -T shows no GLIBC symbol versions (not a glibc binary?)`);
  return versions.at(-1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const x64 = describe('x86_64-unknown-linux-gnu');
  const files = process.argv.length > 2 ? process.argv.slice(2) : [join(root, 'npm', x64.dir, x64.file)];
  let bad = 0;
  for (const file of files) {
    const max = maxGlibc(file);
    const ok = compareVersions(max, GLIBC_LIMIT) <= 0;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${file}: highest GLIBC version needed ${max} (limit ${GLIBC_LIMIT})`);
    if (!ok) bad++;
  }
  process.exit(bad === 0 ? 0 : 1);
}
