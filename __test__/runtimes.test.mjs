// The Bun and Deno lanes' suite (__test__/runtimes/, tools/runtimes/lane.mjs) on Node:
// its better-sqlite3 API cases run against better-sqlite3 itself, which proves that the
// values they expect are better-sqlite3's, and against this package's ESM and CommonJS
// entries; its runtime cases run here too (on V8 the replay's engine wording accepts only
// the recorded message).
import { test } from 'node:test';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import EsmDatabase from '../better-sqlite3.mjs';
import { BetterSqlite3, referenceSkip } from './helpers.mjs';
import { apiCases } from './runtimes/api-cases.mjs';
import { engineCases } from './runtimes/engine-cases.mjs';

const require = createRequire(import.meta.url);
const CommonJsDatabase = require('../better-sqlite3.cjs');

/** Each case as a test of its own, with its fresh folder. */
function register(label, cases, subject, options = {}) {
  for (const c of cases) {
    test(`${label}: ${c.name}`, options, async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'tfx-runtime-case-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      await c.run(subject, dir);
    });
  }
}

register('better-sqlite3 itself', apiCases, BetterSqlite3, { skip: referenceSkip });
register('ESM', apiCases, EsmDatabase);
register('CommonJS', apiCases, CommonJsDatabase);
register('runtime', engineCases, { EsmDatabase, CommonJsDatabase });
