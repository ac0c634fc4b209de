// The main package's prepack guard: the binaries live in npm/<triple>/ packages that the
// published main package names as optionalDependencies, so packing it is only safe when
// they are there. `npm publish` (npm_command=publish) or --all needs every target;
// `npm pack` needs the host's (the one a local tarball test installs). Also checks that
// the platform packages agree with package.json, so a release cannot go out with a
// missing, misnamed or stale platform package. optionalDependencies are not in the
// repository's package.json (`npm ci` cannot lock packages that are not published yet):
// `napi pre-publish` writes them while publishing, and then they must match exactly.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pkg, root, targets } from './targets.mjs';

const npmDir = process.env.TRIFLUX_NPM_DIR ?? join(root, 'npm');
const all = process.argv.includes('--all') || process.env.npm_command === 'publish';
const host = createRequire(import.meta.url)('../lib/native.cjs').hostTriple();

const problems = [];
const optional = pkg.optionalDependencies;
for (const t of targets) {
  const dir = join(npmDir, t.dir);
  const manifestPath = join(dir, 'package.json');
  if (!existsSync(manifestPath)) {
    problems.push(`${manifestPath} is missing`);
    continue;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (manifest.name !== t.pkg) problems.push(`${manifestPath}: name ${manifest.name}, expected ${t.pkg}`);
  if (manifest.version !== pkg.version) problems.push(`${manifestPath}: version ${manifest.version}, expected ${pkg.version}`);
  if (optional && optional[t.pkg] !== pkg.version) {
    problems.push(`package.json optionalDependencies["${t.pkg}"] is ${optional[t.pkg]}, expected ${pkg.version}`);
  }
  if (all || t.dir === host) {
    const binary = join(dir, t.file);
    if (!existsSync(binary) || statSync(binary).size === 0) {
      const how = t.os === 'linux' ? `npm run build:linux -- ${t.rust}` : `the release workflow's artifact bindings-${t.dir}`;
      problems.push(`${binary} is missing (${t.rust}: ${how})`);
    }
  }
}
// The better-sqlite3 alias package pins this exact version of the main package.
const compat = JSON.parse(readFileSync(join(root, 'compat', 'better-sqlite3', 'package.json'), 'utf8'));
if (compat.version !== pkg.version || compat.dependencies?.[pkg.name] !== pkg.version) {
  problems.push(`compat/better-sqlite3: version ${compat.version} depending on ${pkg.name}@${compat.dependencies?.[pkg.name]}, expected ${pkg.version} for both`);
}
for (const name of Object.keys(optional ?? {})) {
  if (!targets.some((t) => t.pkg === name)) problems.push(`package.json optionalDependencies names ${name}, which is not a napi target`);
}

if (problems.length > 0) {
  console.error(`\n${pkg.name}: REFUSING TO ${all ? 'PUBLISH' : 'PACK'} (${all ? 'every target' : `host target ${host}`} checked):`);
  for (const p of problems) console.error(`  - ${p}`);
  console.error('');
  process.exit(1);
}
console.error(`${pkg.name}: platform packages checked (${all ? `all ${targets.length} targets` : host})`);
