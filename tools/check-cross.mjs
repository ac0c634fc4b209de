// Checks of the binaries this machine builds but cannot run: the macOS Mach-O files and,
// where no musl Node is at hand, the musl ELF files. Each check returns a list of
// { ok, what } lines; `node tools/check-cross.mjs [triple…]` checks such binaries in npm/.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMachO } from './macho.mjs';
import { peInfo } from './pe.mjs';
import { root, targets } from './targets.mjs';
import { compareVersions, glibcVersions } from './check-glibc.mjs';

/** The oldest macOS each binary promises: napi-rs's floors, below Node 20's own (10.15 x64, 11.0 arm64). */
export const MIN_MACOS = { x64: '10.13', arm64: '11.0' };
const SYSTEM_DYLIB = /^\/(usr\/lib|System)\//;

/** Absolute folders of this machine that a shipped binary must not name. */
function buildPaths() {
  const home = process.env.HOME;
  const cargoHome = process.env.CARGO_HOME ?? (home ? join(home, '.cargo') : null);
  return [...new Set([root, join(root, 'target'), cargoHome, home && home !== '/' ? `${home}/` : null].filter(Boolean))];
}

function noBuildPath(buf) {
  const found = buildPaths().filter((p) => buf.includes(Buffer.from(p)));
  return { ok: found.length === 0, what: found.length === 0 ? 'no build path inside' : `contains the build path(s) ${found.join(', ')}` };
}

export function checkDarwin(file, t) {
  const buf = readFileSync(file);
  const m = readMachO(buf);
  const napi = m.exports.includes('_napi_register_module_v1');
  const foreign = m.dylibs.filter((d) => !SYSTEM_DYLIB.test(d));
  const checks = [
    { ok: m.cpu === t.cpu && m.filetype === 'dylib', what: `Mach-O ${m.filetype}, CPU ${m.cpu}` },
    { ok: napi, what: napi ? '_napi_register_module_v1 exported' : '_napi_register_module_v1 NOT exported' },
    { ok: m.dylibs.length > 0 && foreign.length === 0, what: foreign.length ? `links non-system dylibs: ${foreign.join(', ')}` : `links only ${m.dylibs.join(', ')}` },
    { ok: m.minMacOS !== null && compareVersions(m.minMacOS, MIN_MACOS[t.cpu]) <= 0, what: `minimum macOS ${m.minMacOS} (at most ${MIN_MACOS[t.cpu]})` },
    { ok: m.installName === `@rpath/${t.file}`, what: `install name ${m.installName}` },
    { ok: m.symbols < 1000, what: `stripped (${m.symbols} symbol table entries)` },
    noBuildPath(buf),
  ];
  // Apple silicon runs no unsigned code: the linker's ad-hoc signature must still hold.
  if (t.cpu === 'arm64') checks.push({ ok: m.signature?.ok === true, what: `ad-hoc code signature: ${m.signature?.why ?? 'missing'}` });
  return checks;
}

const ELF_MACHINE = { 62: 'x64', 183: 'arm64' };

export function checkMusl(file, t) {
  const buf = readFileSync(file);
  const machine = buf.subarray(0, 4).toString('latin1') === '\x7fELF' ? ELF_MACHINE[buf.readUInt16LE(18)] : null;
  const dynamic = execFileSync('readelf', ['-d', '-l', '-W', file], { encoding: 'utf8' });
  const needed = Array.from(dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g), (x) => x[1]);
  const interp = dynamic.match(/Requesting program interpreter: ([^\]]+)\]/)?.[1] ?? null;
  const glibc = glibcVersions(execFileSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const muslLibc = needed.filter((n) => /^libc\.(so|musl-)/.test(n));
  return [
    { ok: machine === t.cpu && buf[4] === 2, what: `ELF64, CPU ${machine}` },
    { ok: glibc.length === 0, what: glibc.length ? `needs GLIBC_${glibc.at(-1)}` : 'no GLIBC symbol versions' },
    { ok: !needed.some((n) => /^(libc\.so\.6|ld-linux|libgcc_s|libstdc\+\+)/.test(n)) && muslLibc.length === 1, what: `needs ${needed.join(', ') || 'nothing'} (musl's loader answers any libc.* name with itself)` },
    { ok: interp === null || /ld-musl-/.test(interp), what: interp ? `interpreter ${interp}` : 'no interpreter (a shared object; musl\'s loader maps it)' },
    noBuildPath(buf),
  ];
}

/** The Windows test build: a PE DLL for x64 exporting the N-API entry point. */
export function checkWindows(file) {
  const info = peInfo(readFileSync(file));
  return [
    { ok: info.machine === 'x64' && info.dll, what: `PE32+ ${info.dll ? 'DLL' : 'executable'}, CPU ${info.machine}` },
    { ok: info.exports.includes('napi_register_module_v1'), what: `exports ${info.exports.join(', ')}` },
    { ok: !info.imports.some((d) => /^node|libnode/i.test(d)), what: `imports ${info.imports.join(', ')} (N-API resolved from the host process)` },
    noBuildPath(readFileSync(file)),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  const chosen = targets.filter((x) => (x.os === 'darwin' || x.libc === 'musl') && (wanted.length === 0 || wanted.includes(x.dir)));
  if (chosen.length === 0) throw new Error(`check-cross: nothing to check for ${wanted.join(' ')} (darwin and musl targets only)`);
  let bad = 0;
  for (const t of chosen) {
    const file = join(root, 'npm', t.dir, t.file);
    if (!existsSync(file)) {
      console.log(`FAIL ${t.dir}: ${file} is missing (npm run build:cross)`);
      bad++;
      continue;
    }
    for (const c of t.os === 'darwin' ? checkDarwin(file, t) : checkMusl(file, t)) {
      console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${t.dir}: ${c.what}`);
      if (!c.ok) bad++;
    }
  }
  process.exit(bad === 0 ? 0 : 1);
}
