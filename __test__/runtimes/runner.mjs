// A test runner that runs the same way on Node, Bun and Deno (each has its own test
// command, with its own reporting and its own gaps in node:test): cases run one after the
// other, each with a fresh folder removed after it, one line per case, then
// "N passed, M failed" as the last line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs `cases` ({ name, run(subject, dir) }) with `subject`, printing "ok" or "not ok"
 * under `label`; returns { passed, failed }.
 */
export async function runCases(label, cases, subject) {
  let passed = 0;
  let failed = 0;
  for (const c of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'tfx-runtime-case-'));
    try {
      await c.run(subject, dir);
      passed += 1;
      console.log(`ok - ${label}: ${c.name}`);
    } catch (error) {
      failed += 1;
      console.log(`not ok - ${label}: ${c.name}`);
      console.log(String(error?.stack ?? error).replace(/^/gm, '    '));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { passed, failed };
}
