// build.rs compiles deps/sqlite3: it must be the very SQLite the better-sqlite3
// devDependency ships (the differential tests compare against it), options included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SQLITE_FILES } from '../tools/update-sqlite.mjs';
import { repoRoot } from './helpers.mjs';

const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('deps/sqlite3 is byte-identical to better-sqlite3\'s (else: node tools/update-sqlite.mjs)', () => {
  for (const [name, source] of Object.entries(SQLITE_FILES)) {
    assert.equal(sha(join(repoRoot, 'deps', 'sqlite3', name)), sha(join(repoRoot, 'node_modules', 'better-sqlite3', source)), name);
  }
});

test('the amalgamation is the one generated with UPDATE/DELETE ... LIMIT in its parser', () => {
  const defines = readFileSync(join(repoRoot, 'deps', 'sqlite3', 'defines.gypi'), 'utf8');
  assert.match(defines, /'SQLITE_ENABLE_UPDATE_DELETE_LIMIT',/);
  // The grammar rule exists only if the option was set when parse.c was generated.
  assert.match(readFileSync(join(repoRoot, 'deps', 'sqlite3', 'sqlite3.c'), 'utf8'), /cmd ::= with DELETE FROM xfullname indexed_opt where_opt_ret orderby_opt limit_opt"/);
});
