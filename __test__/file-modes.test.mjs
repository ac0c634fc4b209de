// A file written from a database is never readable by more users than the database: every
// path that writes a copy (triflux-store backup, its temporary file, --vacuum,
// Database#backup, store.db.backup) gives it the source's permission bits, under the
// usual umask 022, from the moment it exists (empty, before SQLite writes a page).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createStore, Database } from '../index.mjs';
import { createTemporary } from '../lib/cli/commands/backup.mjs';
import { cli } from './cli-helpers.mjs';
import { fixtureCopy, tempDir } from './helpers.mjs';

// Windows has no POSIX permission bits: a mode there only says read-only or not, and a new
// file takes its folder's ACL (docs/cli.md).
const skip = process.platform === 'win32' && 'POSIX permission bits: Windows files take their folder ACL instead';
const SOURCE_MODES = [0o600, 0o640];

const modeOf = (path) => statSync(path).mode & 0o777;
const octal = (mode) => `0${mode.toString(8)}`;

/** Runs `fn` under `mask`, then puts the process's umask back. */
async function underUmask(mask, fn) {
  const before = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}

/** A hub file (the fixture) with `mode`. */
function hubWithMode(t, mode) {
  const path = fixtureCopy(t, 'hub-v6.db');
  chmodSync(path, mode);
  assert.equal(modeOf(path), mode);
  return path;
}

test('triflux-store backup and backup --vacuum: the copy has the source mode', { skip }, async (t) => {
  await underUmask(0o022, async () => {
    for (const mode of SOURCE_MODES) {
      const db = hubWithMode(t, mode);
      const dir = tempDir(t);
      for (const extra of [[], ['--vacuum']]) {
        const out = join(dir, `copy-${octal(mode)}${extra.join('')}.db`);
        const r = await cli(['backup', db, out, ...extra]); // the child inherits umask 022
        assert.equal(r.status, 0, r.stderr);
        assert.equal(octal(modeOf(out)), octal(mode), `${octal(mode)} source ${extra.join(' ') || 'backup'}`);
      }
      // --force replaces a more open file with a copy of the source's mode.
      const open = join(dir, 'open.db');
      writeFileSync(open, '');
      chmodSync(open, 0o666);
      const r = await cli(['backup', db, open, '--force']);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(octal(modeOf(open)), octal(mode), '--force over a 0666 file');
      assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
    }
  });
});

test("the backup's temporary file exists empty with the source mode before a byte is copied", { skip }, async (t) => {
  await underUmask(0o022, async () => {
    for (const mode of SOURCE_MODES) {
      const db = hubWithMode(t, mode);
      const temporary = createTemporary(join(tempDir(t), 'copy.db'), db);
      assert.equal(statSync(temporary).size, 0);
      assert.equal(octal(modeOf(temporary)), octal(mode));
    }
  });
  // The umask narrows further: a 0640 source under umask 077 gives 0600.
  await underUmask(0o077, async () => {
    const temporary = createTemporary(join(tempDir(t), 'copy.db'), hubWithMode(t, 0o640));
    assert.equal(octal(modeOf(temporary)), '0600');
  });
});

test('Database#backup: a new file has the source mode from the first step; an existing one is narrowed', { skip }, async (t) => {
  await underUmask(0o022, async () => {
    for (const mode of SOURCE_MODES) {
      const source = hubWithMode(t, mode);
      const dir = tempDir(t);
      const db = new Database(source, { readonly: true });
      try {
        const out = join(dir, 'copy.db');
        const seen = [];
        // The first progress call comes after a step that copied no page yet.
        await db.backup(out, { progress: () => (seen.length === 0 && seen.push([modeOf(out), statSync(out).size]), 100) });
        assert.deepEqual(seen[0], [mode, 0], 'before the first page');
        assert.equal(octal(modeOf(out)), octal(mode));

        const existing = join(dir, 'existing.db');
        writeFileSync(existing, '');
        chmodSync(existing, 0o664);
        await db.backup(existing);
        assert.equal(octal(modeOf(existing)), octal(0o664 & mode), 'narrowed, never widened');
      } finally {
        db.close();
      }
      // An attached schema's copy takes that schema's file's mode.
      const mem = new Database(':memory:');
      try {
        mem.prepare('ATTACH ? AS other').run(source);
        const out = join(dir, 'attached.db');
        await mem.backup(out, { attached: 'other' });
        assert.equal(octal(modeOf(out)), octal(mode), 'attached schema');
      } finally {
        mem.close();
      }
    }
  });
});

test("store.db.backup (the store's facade) writes the copy with the store file's mode", { skip }, async (t) => {
  await underUmask(0o022, async () => {
    for (const mode of SOURCE_MODES) {
      const path = hubWithMode(t, mode);
      const store = createStore(path);
      try {
        store.registerAgent({ agent_id: 'a1', cli: 'codex' });
        const out = join(tempDir(t), 'store-copy.db');
        await store.db.backup(out);
        assert.equal(octal(modeOf(out)), octal(mode));
        // SQLite gives the copy's own -wal the copy's mode.
        const copy = new Database(out);
        try {
          copy.pragma('journal_mode = WAL');
          copy.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('probe', '1')").run();
          assert.equal(octal(modeOf(`${out}-wal`)), octal(mode), '-wal of the copy');
        } finally {
          copy.close();
        }
      } finally {
        store.close();
      }
    }
  });
});
