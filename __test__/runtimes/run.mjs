// The suite a runtime besides Node runs (tools/runtimes/lane.mjs: `bun run.mjs`,
// `deno run -A run.mjs`): better-sqlite3's API through the package's ESM and CommonJS
// entries, what the package tells of the runtime, and the replay's engine wording. Exits
// 1 when a case fails; the last line is "N passed, M failed".
import { createRequire } from 'node:module';

import EsmDatabase from '../../better-sqlite3.mjs';
import { apiCases } from './api-cases.mjs';
import { engineCases } from './engine-cases.mjs';
import { runCases } from './runner.mjs';

const require = createRequire(import.meta.url);
const CommonJsDatabase = require('../../better-sqlite3.cjs');

const results = [
  await runCases('better-sqlite3 API (ESM)', apiCases, EsmDatabase),
  await runCases('better-sqlite3 API (CommonJS)', apiCases, CommonJsDatabase),
  await runCases('this runtime', engineCases, { EsmDatabase, CommonJsDatabase }),
];
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
