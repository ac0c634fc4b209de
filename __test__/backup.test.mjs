// db.backup() and db.serialize(), differentially: the same scripted operations run
// against better-sqlite3 12 and against this package's `Database`, each on its own copy of
// the same file; every outcome (value, key order, type, whether a promise was returned,
// error class, name, code, message, progress calls, files left behind) must be identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

import { Database } from '../index.mjs';
import { BetterSqlite3, referenceSkip, repoRoot, tempDir } from './helpers.mjs';

function picture(v) {
  if (v === undefined) return ['undefined'];
  if (v === null) return null;
  if (typeof v === 'number') return ['number', String(v)];
  if (typeof v === 'string') return ['string', v];
  if (typeof v === 'boolean') return ['boolean', v];
  if (Buffer.isBuffer(v)) return ['Buffer', v.length, createHash('sha256').update(v).digest('hex')];
  if (Array.isArray(v)) return ['array', v.map(picture)];
  const proto = Object.getPrototypeOf(v);
  const cls = proto === null ? 'null' : proto === Object.prototype ? 'Object' : proto.constructor?.name;
  return ['object', cls, Object.keys(v).map((k) => [k, picture(v[k])])];
}

async function outcome(fn) {
  let returned;
  try {
    returned = fn();
  } catch (e) {
    return { threw: [e?.constructor?.name, e?.name, e?.code ?? null, e?.message] };
  }
  const promise = returned instanceof Promise;
  try {
    return { promise, value: picture(await returned) };
  } catch (e) {
    return { promise, rejected: [e?.constructor?.name, e?.name, e?.code ?? null, e?.message] };
  }
}

/** A database file with `rows` rows of ~1 KB, written once and copied for each side. */
function sourceFile(dir, rows) {
  const path = join(dir, 'source.db');
  const db = new Database(path);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < rows; i++) ins.run(`${i}:${'x'.repeat(1000)}`);
  })();
  db.close();
  return path;
}

/**
 * Runs `script(D, dir, source, step)` for each implementation; `source` is that side's copy
 * of the shared file; `step(label, fn)` records an outcome (awaiting promises).
 */
function differential(name, { rows = 0, fixture = null } = {}, script) {
  test(name, { skip: referenceSkip }, async (t) => {
    const shared = tempDir(t);
    const original = fixture ? join(repoRoot, 'fixtures', fixture) : sourceFile(shared, rows);
    const runs = [];
    for (const D of [BetterSqlite3, Database]) {
      const dir = tempDir(t);
      const source = join(dir, 'db.sqlite');
      copyFileSync(original, source);
      const steps = [];
      const opened = [];
      const Wrapped = function (...args) {
        const db = new D(...args);
        opened.push(db);
        return db;
      };
      try {
        await script(Wrapped, dir, source, async (label, fn) => steps.push([label, await outcome(fn)]));
      } finally {
        for (const db of opened) if (db.open) db.close();
      }
      runs.push(steps);
    }
    assert.ok(runs[0].length > 0);
    for (let i = 0; i < runs[0].length; i++) assert.deepEqual(runs[1][i], runs[0][i], `step ${runs[0][i][0]}`);
    assert.equal(runs[1].length, runs[0].length);
  });
}

const countRows = (D, file) => {
  const db = new D(file, { readonly: true });
  try {
    return db.prepare('SELECT COUNT(*) AS n, SUM(length(v)) AS bytes FROM t').get();
  } finally {
    db.close();
  }
};

differential('backup: result, progress calls and the copy, for each page step', { rows: 600 }, async (D, dir, source, step) => {
  const db = new D(source);
  const handlers = {
    none: undefined,
    undefinedReturn: () => undefined,
    ten: () => 10,
    fractional: () => 2.6,
    huge: () => 1e12,
    negativeOnce: (() => {
      let calls = 0;
      return () => (calls++ < 3 ? -5 : 50); // 0 pages (a pause) three times, then 50
    })(),
  };
  for (const [label, fn] of Object.entries(handlers)) {
    const calls = [];
    const out = join(dir, `${label}.db`);
    const progress = fn && ((p) => {
      calls.push(p);
      return fn(p);
    });
    await step(`backup ${label}`, () => db.backup(out, progress ? { progress } : undefined));
    await step(`calls ${label}`, () => calls);
    await step(`copy ${label}`, () => countRows(D, out));
  }
  await step('into an existing database file (replaced)', () => db.backup(join(dir, 'ten.db'), { progress: () => 1000 }));
  await step('replaced copy', () => countRows(D, join(dir, 'ten.db')));
});

differential('backup: a read-only connection, an attached schema, a fixture file', { fixture: 'hub-v6.db' }, async (D, dir, source, step) => {
  const ro = new D(source, { readonly: true, fileMustExist: true });
  const calls = [];
  await step('readonly backup', () => ro.backup(join(dir, 'ro.db'), { progress: (p) => (calls.push(p), 7) }));
  await step('readonly calls', () => calls);
  await step('same bytes as serialize', () => {
    const copy = new D(join(dir, 'ro.db'), { readonly: true });
    try {
      return copy.prepare('SELECT COUNT(*) FROM messages').pluck().get();
    } finally {
      copy.close();
    }
  });
  const mem = new D(':memory:');
  mem.exec(`ATTACH '${join(dir, 'ro.db').replace(/'/g, "''")}' AS other`);
  await step('attached backup', () => mem.backup(join(dir, 'attached.db'), { attached: 'other' }));
  await step('attached copy', () => {
    const copy = new D(join(dir, 'attached.db'), { readonly: true });
    try {
      return copy.prepare('SELECT COUNT(*) FROM agents').pluck().get();
    } finally {
      copy.close();
    }
  });
  await step('empty in-memory backup', () => new D(':memory:').backup(join(dir, 'empty.db')));
});

differential('backup: argument errors and failing destinations', { rows: 50 }, async (D, dir, source, step) => {
  const db = new D(source);
  await step('no filename', () => db.backup());
  await step('number filename', () => db.backup(5));
  await step('options not an object', () => db.backup(join(dir, 'a.db'), 'x'));
  await step('empty filename', () => db.backup('   '));
  await step(':memory:', () => db.backup(':memory:'));
  await step('attached number', () => db.backup(join(dir, 'a.db'), { attached: 1 }));
  await step('attached empty', () => db.backup(join(dir, 'a.db'), { attached: '' }));
  await step('progress not a function', () => db.backup(join(dir, 'a.db'), { progress: 3 }));
  await step('missing directory', () => db.backup(join(dir, 'nope', 'a.db')));
  await step('unknown attached schema', () => db.backup(join(dir, 'b.db'), { attached: 'nope' }));
  await step('b.db left behind', () => existsSync(join(dir, 'b.db')));
  // A NUL in the path is refused here (docs/better-sqlite3-api.md); an unknown schema is
  // reported first either way, and a name is cut at a NUL as a C string is.
  await step('unknown schema, NUL in the path', () => db.backup(join(dir, 'n\0ul.db'), { attached: 'nope' }));
  await step('NUL in the attached name', () => db.backup(join(dir, 'g.db'), { attached: 'main\0ignored' }));
  await step('g.db', () => existsSync(join(dir, 'g.db')));
  // A source SQLite cannot read the schema of: the schema is looked up without a query.
  const image = db.serialize();
  const truncated = new D(image.subarray(0, 100));
  await step('truncated source, unknown schema', () => truncated.backup(join(dir, 'h.db'), { attached: 'aux' }));
  await step('truncated source', () => truncated.backup(join(dir, 'i.db')));
  await step('i.db', () => existsSync(join(dir, 'i.db')));
  mkdirSync(join(dir, 'adir'));
  await step('destination is a directory', () => db.backup(join(dir, 'adir')));
  writeFileSync(join(dir, 'text.db'), 'not a database '.repeat(100));
  await step('destination is not a database', () => db.backup(join(dir, 'text.db')));
  await step('text.db kept', () => readFileSync(join(dir, 'text.db'), 'utf8').slice(0, 15));
  await step('progress returns a string', () => db.backup(join(dir, 'c.db'), { progress: () => 'fast' }));
  await step('c.db removed', () => existsSync(join(dir, 'c.db')));
  await step('progress returns NaN', () => db.backup(join(dir, 'c2.db'), { progress: () => NaN }));
  await step('progress throws', () =>
    db.backup(join(dir, 'd.db'), {
      progress: () => {
        throw new RangeError('stop here');
      },
    }),
  );
  await step('d.db removed', () => existsSync(join(dir, 'd.db')));
  await step('closed mid-way', () => db.backup(join(dir, 'e.db'), { progress: () => (db.close(), 1) }));
  await step('e.db removed', () => existsSync(join(dir, 'e.db')));
  await step('closed database', () => db.backup(join(dir, 'f.db')));
  await step('f.db', () => existsSync(join(dir, 'f.db')));
});

differential('serialize: bytes, options and errors', { fixture: 'hub-v6.db' }, async (D, dir, source, step) => {
  const db = new D(source, { readonly: true });
  await step('file database', () => db.serialize());
  await step('equals the file', () => db.serialize().equals(readFileSync(source)));
  await step('main by name', () => db.serialize({ attached: 'main' }).length);
  await step('options not an object', () => db.serialize('main'));
  await step('attached number', () => db.serialize({ attached: 2 }));
  await step('attached empty', () => db.serialize({ attached: '' }));
  await step('unknown schema', () => db.serialize({ attached: 'nope' }));
  await step('temp before use', () => db.serialize({ attached: 'temp' }));
  const it = db.prepare('SELECT id FROM messages').iterate();
  it.next();
  await step('while iterating', () => db.serialize());
  it.return();
  await step('after iterating', () => db.serialize().length);
  const mem = new D(':memory:');
  await step('empty memory database', () => mem.serialize());
  mem.exec("CREATE TABLE t (x); INSERT INTO t VALUES ('a'), ('b');");
  // Bytes 92-99 hold the writing SQLite's version: blank them for the comparison.
  await step('memory database', () => {
    const b = mem.serialize();
    b.fill(0, 92, 100);
    return b;
  });
  await step('round trip', () => {
    const copy = new D(join(dir, 'rt.db'));
    copy.close();
    writeFileSync(join(dir, 'rt.db'), mem.serialize());
    const back = new D(join(dir, 'rt.db'), { readonly: true });
    try {
      return back.prepare('SELECT group_concat(x) FROM t').pluck().get();
    } finally {
      back.close();
    }
  });
  await step('NUL in the attached name', () => mem.serialize({ attached: 'main\0ignored' }).length);
  // SQLite hands back an in-memory database's bytes as they are, schema readable or not.
  const truncated = new D(mem.serialize().subarray(0, 100));
  await step('truncated image', () => truncated.serialize());
  await step('truncated image, unknown schema', () => truncated.serialize({ attached: 'nope' }));
  await step('truncated image, read', () => truncated.prepare('SELECT 1').get());
  db.close();
  await step('closed', () => db.serialize());
});

test('a NUL in a path is refused with a TypeError, where better-sqlite3 would cut the path there', async (t) => {
  const dir = tempDir(t);
  assert.throws(() => new Database(join(dir, 'a\0b.db')), { name: 'TypeError', message: 'The database path must not contain NUL characters' });
  const db = new Database(join(dir, 'src.db'));
  t.after(() => db.close());
  await assert.rejects(db.backup(join(dir, 'c\0d.db')), { name: 'TypeError', message: 'The database path must not contain NUL characters' });
  assert.equal(existsSync(join(dir, 'a')), false);
  assert.equal(existsSync(join(dir, 'c')), false);
});

test('backup steps leave the event loop free between steps', async (t) => {
  const dir = tempDir(t);
  const db = new Database(sourceFile(dir, 400));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const seen = [];
  try {
    await db.backup(join(dir, 'copy.db'), {
      progress: (p) => {
        seen.push(ticks);
        return 1;
      },
    });
  } finally {
    clearInterval(timer);
    db.close();
  }
  assert.ok(seen.length > 100);
  assert.ok(seen[seen.length - 1] > seen[0], 'timers ran while the backup was in progress');
});

test('store.db.backup copies the store while it is open', async (t) => {
  const { createStore } = await import('../index.mjs');
  const dir = tempDir(t);
  const store = createStore(join(dir, 'hub.db'));
  store.registerAgent({ agent_id: 'a1', cli: 'codex' });
  store.auditLog({ type: 'event', from: 'a1', to: 'b', topic: 't' });
  const result = await store.db.backup(join(dir, 'copy.db'));
  store.auditLog({ type: 'event', from: 'a1', to: 'b', topic: 't' });
  store.close();
  const copy = new Database(join(dir, 'copy.db'), { readonly: true });
  assert.deepEqual(Object.keys(result), ['totalPages', 'remainingPages']);
  assert.equal(result.remainingPages, 0);
  assert.equal(copy.prepare('SELECT COUNT(*) FROM messages').pluck().get(), 1);
  assert.equal(copy.prepare('SELECT COUNT(*) FROM agents').pluck().get(), 1);
  copy.close();
});
