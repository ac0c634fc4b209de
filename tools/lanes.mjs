// A small work queue for builds: N lanes, each taking the next job when its last one ends.
// Much of a release build is single-threaded (the SQLite amalgamation's compile, the LTO
// link of one codegen unit), so two builds at once keep two cores busy.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** More lanes than this only add memory (an LTO link each) and contention. */
const MAX_LANES = 4;

/** The lanes asked for by `--jobs N` / `--jobs=N` / `-j N`, else `env`, else one per core (at most 4). */
export function parseJobs(argv, env) {
  let asked = env;
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--jobs' || a === '-j') asked = argv[++i];
    else if (a.startsWith('--jobs=')) asked = a.slice('--jobs='.length);
    else rest.push(a);
  }
  if (asked === undefined || asked === '') return { jobs: Math.min(availableParallelism(), MAX_LANES), rest };
  if (!/^[1-9]\d*$/.test(String(asked))) throw new Error(`--jobs wants a whole number of lanes (1 or more), not "${asked}"`);
  return { jobs: Number(asked), rest };
}

/**
 * Runs `cmd args` in `cwd` with `env`; its stdout and stderr go to the file `log`, or to
 * this process's own when `log` is null. Resolves to null when it exits 0, else to why not.
 */
export function spawnTo(cmd, args, { cwd, env, log }) {
  return new Promise((resolve) => {
    const fd = log ? openSync(log, 'w') : null;
    let settled = false;
    const done = (why) => {
      if (!settled) resolve(why);
      settled = true;
    };
    try {
      const child = spawn(cmd, args, { cwd, env, stdio: fd === null ? 'inherit' : ['ignore', fd, fd] });
      child.on('error', (e) => done(e.message));
      child.on('close', (code, signal) => done(code === 0 ? null : signal ? `killed by ${signal}` : `exit ${code}`));
    } finally {
      // The child holds its own copy of the file.
      if (fd !== null) closeSync(fd);
    }
  });
}

/**
 * Calls `work(item, lane)` for each item, `lanes` at a time (lane numbers 1…lanes). After
 * a failure no new item starts; the running ones finish. Returns, in `items`' order,
 * { item, lane, value } or { item, lane, error }, or { item } for an item never started.
 */
export async function runLanes(items, lanes, work) {
  const results = items.map((item) => ({ item }));
  let next = 0;
  let failed = false;
  async function lane(n) {
    while (next < items.length && !failed) {
      const i = next++;
      results[i].lane = n;
      try {
        results[i].value = await work(items[i], n);
      } catch (error) {
        results[i].error = error;
        failed = true;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, (_, i) => lane(i + 1)));
  return results;
}
