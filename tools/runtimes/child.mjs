// Running a script under Bun or Deno from the lane (a Node process that may be serving the
// lanes' registry meanwhile, so children run asynchronously), with the runtimes' caches
// kept in .tools/runtimes/ rather than the user's home.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { root } from '../targets.mjs';

/** Runs `cmd args`; resolves to { code, stdout, stderr, ms } (code null after a timeout). */
export function runChild(cmd, args, { cwd = root, env = process.env, timeoutMs = 10 * 60 * 1000 } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}\n`, ms: Date.now() - started });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? null : code, stdout, stderr: signal ? `${stderr}killed by ${signal}\n` : stderr, ms: Date.now() - started });
    });
  });
}

/** The arguments that run `script` under `runtime` (Deno needs its permissions granted). */
export function scriptArgs(runtime, script, args = []) {
  return runtime.name === 'deno' ? ['run', '-A', script, ...args] : [script, ...args];
}

/** The environment the lanes run a runtime in: caches under .tools/runtimes/, no update checks. */
export function runtimeEnv(runtime, extra = {}) {
  const cache = join(root, '.tools', 'runtimes', `${runtime.name}-cache`);
  const own =
    runtime.name === 'deno'
      ? { DENO_DIR: cache, DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' }
      : { BUN_INSTALL_CACHE_DIR: cache, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0', DO_NOT_TRACK: '1' };
  return { ...process.env, ...own, ...extra };
}
