// A worker thread of an adversarial sequence: opens the sequence's file and starts a
// statement that never ends on its own, after telling the main thread it has started, so
// that the main thread terminates it in the middle of that statement.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const { entry, file, script } = workerData;

const FOREVER = 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c)';
let started = false;
const start = () => {
  if (!started) parentPort.postMessage('started');
  started = true;
};

try {
  const Database = require(entry);
  const db = new Database(file, { timeout: 0 });
  db.exec('CREATE TABLE IF NOT EXISTS t (a INTEGER, b TEXT, c BLOB)');
  db.function('f', (x) => (start(), x));
  if (script === 'function') {
    db.prepare(`${FOREVER} SELECT sum(f(i)) FROM c`).get();
  } else if (script === 'transaction') {
    db.exec('BEGIN IMMEDIATE');
    const insert = db.prepare('INSERT INTO t (a, b) VALUES (f(?), ?)');
    for (let i = 0; ; i++) insert.run(i, 'w');
  } else {
    for (const row of db.prepare(`${FOREVER} SELECT i FROM c`).iterate()) start(row);
  }
} catch (error) {
  // Not started (the file locked, not a database): the main thread records why.
  parentPort.postMessage(`failed: ${error?.code ?? ''} ${error?.message}`);
}
