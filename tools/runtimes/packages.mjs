// The packages as they are published, packed from this checkout for the lanes' registry:
// the main package with its optionalDependencies (written at publish by `napi
// pre-publish`, added here as tools/fresh-install.mjs adds them), every platform package,
// and triflux-better-sqlite3. The host's platform package carries this checkout's build;
// the others carry their manifest only (their binaries are not built for this run): the
// installers read their os, cpu and libc and skip them, but for Deno, which also unpacks
// linux-x64-musl's on a glibc machine and never loads it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pkg, root, targets } from '../targets.mjs';

const require = createRequire(import.meta.url);

function npmPack(cwd, out, { env = process.env, ignoreScripts = false } = {}) {
  const args = ['pack', '--silent', '--pack-destination', out, ...(ignoreScripts ? ['--ignore-scripts'] : [])];
  execFileSync('npm', args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Packs every package into `out` (tarballs only), using `scratch` for staging. Returns the
 * host's triple and platform package name.
 */
export function packPublished(out, scratch) {
  const host = require('../../lib/native.cjs').hostTriple();
  mkdirSync(out, { recursive: true });

  // The platform packages: npm/<triple>/ copied without binaries, the host's build added.
  const npmDir = join(scratch, 'npm');
  for (const t of targets) {
    mkdirSync(join(npmDir, t.dir), { recursive: true });
    for (const file of readdirSync(join(root, 'npm', t.dir)).filter((f) => !f.endsWith('.node'))) {
      copyFileSync(join(root, 'npm', t.dir, file), join(npmDir, t.dir, file));
    }
  }
  const binary = `${pkg.napi.binaryName}.${host}.node`;
  copyFileSync(join(root, binary), join(npmDir, host, binary));
  for (const t of targets) npmPack(join(npmDir, t.dir), out, { ignoreScripts: t.dir !== host });

  // The main package (its prepack guard looks for the host's binary in the staged npm/),
  // unpacked, given its optionalDependencies and packed again.
  const stage = join(scratch, 'main');
  mkdirSync(stage);
  npmPack(root, stage, { env: { ...process.env, TRIFLUX_NPM_DIR: npmDir } });
  execFileSync('tar', ['-xzf', join(stage, `${pkg.name}-${pkg.version}.tgz`), '-C', stage]);
  const manifestPath = join(stage, 'package', 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.optionalDependencies = Object.fromEntries(targets.map((t) => [t.pkg, pkg.version]));
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  npmPack(join(stage, 'package'), out, { ignoreScripts: true });

  npmPack(join(root, 'compat', 'better-sqlite3'), out);
  return { host, hostPackage: `${pkg.name}-${host}` };
}
