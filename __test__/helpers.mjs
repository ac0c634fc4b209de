// Shared test helpers: fresh temp directories and fixture copies, all inside the repo's
// own files (tests never reach outside the repository).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh temp directory removed when the test ends. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'tfx-native-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Copies fixtures/<name> into a temp dir and returns the copy's path. */
export function fixtureCopy(t, name) {
  const dir = tempDir(t);
  const target = join(dir, 'hub.db');
  copyFileSync(join(repoRoot, 'fixtures', name), target);
  return target;
}

/** Captures console.warn output while `fn` runs. */
export function captureWarnings(fn) {
  const original = console.warn;
  const seen = [];
  console.warn = (...args) => seen.push(args.join(' '));
  try {
    return { value: fn(), warnings: seen };
  } finally {
    console.warn = original;
  }
}

/** Runs fn and returns the error it throws (fails the test when it does not throw). */
export function thrown(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Busy-waits into the next millisecond, so time-ordered rows never tie. */
export function nextMs() {
  const start = Date.now();
  while (Date.now() === start) {}
}
