// Copies better-sqlite3's SQLite (its generated amalgamation and its list of compile
// options) from node_modules into deps/sqlite3/, which build.rs compiles. Run after
// bumping the better-sqlite3 devDependency; __test__/sqlite-source.test.mjs fails while
// the two differ.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './targets.mjs';

export const SQLITE_FILES = {
  'sqlite3.c': 'deps/sqlite3/sqlite3.c',
  'sqlite3.h': 'deps/sqlite3/sqlite3.h',
  'sqlite3ext.h': 'deps/sqlite3/sqlite3ext.h',
  'defines.gypi': 'deps/defines.gypi',
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const from = join(root, 'node_modules', 'better-sqlite3');
  mkdirSync(join(root, 'deps', 'sqlite3'), { recursive: true });
  for (const [name, source] of Object.entries(SQLITE_FILES)) {
    copyFileSync(join(from, source), join(root, 'deps', 'sqlite3', name));
  }
  console.log(`deps/sqlite3 now holds better-sqlite3 ${(await import(join(from, 'package.json'), { with: { type: 'json' } })).default.version}'s SQLite`);
}
