// How the tools tell which Node a better-sqlite3 build is for (tools/platform-tools.mjs):
// its binary is searched a piece at a time for the module's registration symbol, so the
// symbol must be found wherever it lies, a piece's boundary included.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';

import { betterSqlite3BuiltFor } from '../tools/platform-tools.mjs';
import { referenceDir } from '../tools/reference.mjs';

const PIECE = 64 * 1024;

/** A package folder whose binary is `size` bytes of filler with `text` written at `at`. */
function fakeBuild(root, name, size, text, at) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'build', 'Release'), { recursive: true });
  const bytes = Buffer.alloc(size, 0x2e);
  if (text !== null) bytes.write(text, at, 'latin1');
  writeFileSync(join(dir, 'build', 'Release', 'better_sqlite3.node'), bytes);
  return dir;
}

test('betterSqlite3BuiltFor finds the registration symbol anywhere, across a 64 KB boundary too', () => {
  const root = mkdtempSync(join(tmpdir(), 'tfx-reference-'));
  try {
    const symbol = 'node_register_module_v137\0';
    const size = 3 * PIECE + 123;
    const places = [0, PIECE - symbol.length, PIECE - 10, PIECE - 1, PIECE, 2 * PIECE - 5, size - symbol.length];
    for (const at of places) {
      const dir = fakeBuild(root, `at-${at}`, size, symbol, at);
      assert.equal(betterSqlite3BuiltFor(dir, '137'), true, `the symbol at byte ${at}`);
      assert.equal(betterSqlite3BuiltFor(dir, '127'), false, `another ABI, the symbol at byte ${at}`);
    }
    // A symbol of another ABI that begins with the one asked for (v13 in v137) does not count.
    assert.equal(betterSqlite3BuiltFor(fakeBuild(root, 'prefix', size, symbol, PIECE - 12), '13'), false);
    assert.equal(betterSqlite3BuiltFor(fakeBuild(root, 'none', size, null, 0), '137'), false);
    assert.equal(betterSqlite3BuiltFor(fakeBuild(root, 'short', 10, null, 0), '137'), false);
    assert.equal(betterSqlite3BuiltFor(join(root, 'missing'), '137'), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the reference installed for this Node is recognised as built for it', (t) => {
  const dir = referenceDir();
  if (dir === null) return t.skip('no better-sqlite3 build for this Node (tools/reference.mjs says why)');
  assert.equal(betterSqlite3BuiltFor(dir, process.versions.modules), true);
  assert.equal(betterSqlite3BuiltFor(dir, String(Number(process.versions.modules) + 1)), false);
});
