// `triflux-store checkpoint <db> [--truncate]`: copies the WAL's frames into the database
// file. Reports the WAL's frames before and after and whether a reader (or writer) kept
// the checkpoint from completing.

import { fileSize, walPath } from '../files.mjs';
import { openHub, sqlite } from '../open.mjs';
import { bytes, int, pairs, printJson, println, visible } from '../util.mjs';

const walSize = (path) => fileSize(walPath(path));

/**
 * `PRAGMA wal_checkpoint(mode)`, tried again while another connection's checkpoint (the
 * hub's background checkpointer) holds the checkpoint lock: SQLite then answers busy with
 * no frame counts at once, without waiting. Gives up after `timeoutMs`.
 */
function checkpoint(db, mode, timeoutMs) {
  const until = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const [result] = db.pragma(`wal_checkpoint(${mode})`);
    if (!(result.busy === 1 && result.log === -1) || Date.now() >= until) return result;
    Atomics.wait(pause, 0, 0, 5);
  }
}

export function run({ args, options, io }) {
  const path = args[0];
  const mode = options.truncate ? 'TRUNCATE' : 'PASSIVE';
  const { db } = openHub(path, { busyTimeout: options.busyTimeout, readonly: false });
  let result;
  try {
    result = sqlite(path, () => {
      const journalMode = db.pragma('journal_mode', { simple: true });
      const before = walSize(path);
      // The WAL's frames as they are (NOOP copies nothing): a complete TRUNCATE resets
      // the WAL and reports zeros for it.
      const [was] = db.pragma('wal_checkpoint(NOOP)');
      const { busy, log, checkpointed } = checkpoint(db, mode, Number(options.busyTimeout ?? 5000));
      const after = walSize(path);
      if (log === -1 && journalMode !== 'wal') {
        return { file: path, mode: mode.toLowerCase(), journal_mode: journalMode, wal: false };
      }
      if (log === -1) {
        // Another checkpoint held the lock for the whole busy timeout.
        return {
          file: path,
          mode: mode.toLowerCase(),
          journal_mode: journalMode,
          wal: true,
          frames_before: was.log,
          frames_checkpointed: 0,
          frames_after: was.log - was.checkpointed,
          wal_size_before: before,
          wal_size_after: after,
          blocked: true,
        };
      }
      // A TRUNCATE that completed emptied the WAL: every frame it had is in the database
      // file (the hub may have added some between the two calls: at least `was.log`).
      const reset = mode === 'TRUNCATE' && busy === 0 && log === 0;
      const framesBefore = reset ? was.log : log;
      return {
        file: path,
        mode: mode.toLowerCase(),
        journal_mode: journalMode,
        wal: true,
        frames_before: framesBefore,
        frames_checkpointed: reset ? framesBefore : checkpointed,
        frames_after: reset ? 0 : log - checkpointed,
        wal_size_before: before,
        wal_size_after: after,
        blocked: busy === 1 || checkpointed < log,
      };
    });
  } finally {
    db.close();
  }
  const code = result.wal && result.blocked ? 1 : 0;
  if (options.json) {
    printJson(io.stdout, result);
    return code;
  }
  if (!result.wal) {
    println(io.stdout, `${visible(path)}: journal mode is ${result.journal_mode}, not wal: nothing to checkpoint`);
    return 0;
  }
  println(
    io.stdout,
    pairs([
      ['mode', result.mode],
      ['frames before', int(result.frames_before)],
      ['checkpointed', int(result.frames_checkpointed)],
      ['frames after', `${int(result.frames_after)} (not yet in the database file)`],
      ['wal size', `${bytes(result.wal_size_before)} -> ${bytes(result.wal_size_after)}`],
      [
        'blocked',
        result.blocked
          ? `yes: another connection (a reader's open snapshot, or a writer) kept the checkpoint from completing${mode === 'TRUNCATE' ? ` within ${options.busyTimeout} ms` : ''}`
          : 'no',
      ],
    ]),
  );
  return code;
}
