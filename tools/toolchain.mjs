// What the release builds share: running a step loudly, the pinned zig + cargo-zigbuild
// from PyPI in a project-local virtualenv (.tools/zig), a Rust standard library per
// target, and the path remapping that keeps this machine's folders out of the binaries.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { root } from './targets.mjs';

/** The npm on PATH, as its JavaScript entry point (npm-cli.js), which any Node can run. */
export function npmCli() {
  return realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
}

/** napi-rs's CLI (@napi-rs/cli), which runs cargo (or cargo-zigbuild with -x) for a build. */
export const napi = join(root, 'node_modules', '.bin', 'napi');

export function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
  }
}

/** Runs a step whose output is noise when it works: shown only if it fails. */
export function runQuiet(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    process.stderr.write(output);
    throw Object.assign(new Error(`${cmd} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`), { output });
  }
}

/**
 * A project-local virtualenv .tools/<name> with tools/<name>-requirements.txt installed
 * from PyPI, made again when the pins change; returns its bin folder.
 */
export function ensureVenv(name, afterInstall = () => {}) {
  const dir = join(root, '.tools', name);
  const bin = join(dir, 'bin');
  const requirements = join(root, 'tools', `${name}-requirements.txt`);
  const stamp = join(dir, 'requirements.stamp');
  const wanted = readFileSync(requirements, 'utf8');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    console.log(`toolchain: installing ${wanted.trim().split('\n').join(', ')} into .tools/${name}`);
    run('python3', ['-m', 'venv', dir]);
    run(join(bin, 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', requirements]);
    afterInstall(bin);
    writeFileSync(stamp, wanted);
  }
  return bin;
}

/** zig + cargo-zigbuild at the pinned versions (.tools/zig); returns their bin folder. */
export function ensureZig() {
  return ensureVenv('zig', (bin) => {
    // The ziglang wheel has no `zig` command; napi build -x and cargo-zigbuild look for one.
    writeFileSync(join(bin, 'zig'), '#!/bin/sh\nexec "$(dirname "$0")/python" -m ziglang "$@"\n');
    chmodSync(join(bin, 'zig'), 0o755);
  });
}

export function ensureRustTarget(rust) {
  const installed = execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' }).split('\n');
  if (installed.includes(rust)) return;
  const added = spawnSync('rustup', ['target', 'add', rust], { stdio: 'inherit' });
  if (added.status !== 0) {
    throw new Error(`the Rust standard library for ${rust} is not installed and \`rustup target add ${rust}\` failed: ` +
      'this machine cannot build that target (the release workflow builds it)');
  }
}

/**
 * RUSTFLAGS that replace this checkout's and the cargo home's absolute paths (panic
 * locations in dependencies) with neutral names, so no build path ships in a binary.
 * RUSTFLAGS rather than a per-target key: napi build sets RUSTFLAGS itself for musl
 * (adding -crt-static to what it finds), which would hide a per-target key. With
 * --target, cargo applies them to the target's crates only.
 */
export function rustflags(...extra) {
  const cargoHome = process.env.CARGO_HOME ?? join(homedir(), '.cargo');
  return [process.env.RUSTFLAGS, `--remap-path-prefix=${cargoHome}=cargo`, `--remap-path-prefix=${root}=.`, ...extra].filter(Boolean).join(' ');
}
