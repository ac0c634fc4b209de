//! The checkpoint thread: its connections, its rounds, restarts and pins (see the
//! parent module for the design).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::connections::{begin_read, on_busy, open_side, BUSY_LIMIT, BUSY_SINCE};
use super::gate::RestartGate;
use super::{
    Shared, BOUND, CATCH_UP_PASSES, CATCH_UP_TAIL, FAILURE_RETRY, FRAME_HEADER, FULL_AT, IDLE, READERS_SEEN,
    REPORT_EVERY, RESTART_AT, RETRY, SIDE_BUSY, TICK, WAITS,
};
use crate::error::{SResult, StoreError};
use crate::ffi::sqlite as raw;

/// The thread's side: its connections and where it is.
pub(super) struct Worker {
    path: String,
    /// Checkpoints.
    conn: Connection,
    /// Holds the write lock while the WAL is restarted, and writes its first frame.
    writer: Connection,
    /// Two pin connections, so that a new pin is taken before the old one is let go.
    pins: [Connection; 2],
    pinned: Option<usize>,
    /// Closed while this thread restarts the WAL: the store's connection begins no write
    /// meanwhile (see `gate::RestartGate`).
    gate: Arc<RestartGate>,
    frame_bytes: i64,
    /// The `journal_size_limit` the writer connection has.
    journal_limit: i64,
    /// The wait of the last restart that readers kept from completing.
    last_wait: Duration,
    /// The wait of the last RESTART checkpoint that readers outlasted (zero after one
    /// that completed).
    outlasted: Duration,
    /// Until then, restarts wait for other processes' readers (see `restart_after_readers`).
    readers_until: Option<Instant>,
    /// Until then, other processes are seen writing to the file (frames the store did
    /// not write): restarts do not close the gate (see `restart`).
    writers_until: Option<Instant>,
    /// The WAL's frames after the writer connection's last commit (with the store's last
    /// commit's, every frame this process wrote).
    writer_frames: i64,
    commits_seen: u64,
    last_commit: Instant,
    /// The WAL was restarted (or found empty) since the last commit: nothing to do idle.
    idle_done: bool,
    /// A restart that did not complete: try again after [`RETRY`].
    retry_at: Option<Instant>,
    last_report: Option<Instant>,
}

impl Worker {
    pub(super) fn open(path: &str, gate: Arc<RestartGate>) -> SResult<Worker> {
        let mut conn = open_side(path)?;
        // On this thread only: the connection is opened here but used on the thread,
        // where the thread-local limit lives.
        conn.busy_handler(Some(on_busy))?;
        let writer = open_side(path)?;
        // The restart write commits like the store does (its only sync is the header's);
        // the limit it truncates the WAL to follows the store connection's.
        writer.execute_batch("PRAGMA synchronous = NORMAL")?;
        let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(Worker {
            path: path.to_string(),
            conn,
            writer,
            pins: [open_side(path)?, open_side(path)?],
            pinned: None,
            gate,
            frame_bytes: page + FRAME_HEADER,
            journal_limit: -1,
            last_wait: Duration::ZERO,
            outlasted: Duration::ZERO,
            readers_until: None,
            writers_until: None,
            writer_frames: 0,
            commits_seen: 0,
            last_commit: Instant::now(),
            idle_done: false,
            retry_at: None,
            last_report: None,
        })
    }

    /// The thread's life; `started` is told once the gate is closed for [`Self::prime`].
    pub(super) fn run(mut self, shared: &Shared, started: std::sync::mpsc::Sender<()>) {
        {
            let gate = self.gate.clone();
            let _closed = gate.close();
            let _ = started.send(());
            self.prime();
            self.set_full_frames(shared);
        }
        loop {
            {
                let mut wake = shared.wake.lock().unwrap_or_else(|e| e.into_inner());
                if wake.explicit > 0 && !wake.stop {
                    // An explicit checkpoint on the store's connection: out of its way.
                    drop(wake);
                    self.unpin(shared);
                    wake = shared.wake.lock().unwrap_or_else(|e| e.into_inner());
                    wake.paused = true;
                    shared.cv.notify_all();
                    while wake.explicit > 0 && !wake.stop {
                        wake = shared.cv.wait(wake).unwrap_or_else(|e| e.into_inner());
                    }
                    wake.paused = false;
                }
                if wake.stop {
                    break;
                }
                if !shared.signaled.load(Ordering::Acquire) {
                    let (wake, _) = shared.cv.wait_timeout(wake, TICK).unwrap_or_else(|e| e.into_inner());
                    if wake.stop {
                        break;
                    }
                    if wake.explicit > 0 {
                        continue;
                    }
                }
            }
            shared.signaled.store(false, Ordering::Release);
            self.round(shared);
        }
        self.unpin(shared);
        shared.status().running = false;
        // Dropping the connections: if they are the file's last, SQLite checkpoints and
        // removes the WAL here, on this thread.
    }

    fn round(&mut self, shared: &Shared) {
        self.checkpoint_if_due(shared);
        // Whatever the round did, writes that waited for it go on (the next commit past
        // the size makes the next write wait again).
        self.set_full_frames(shared);
        self.gate.release_full();
    }

    /// Where commits make writes wait ([`FULL_AT`]): not while automatic checkpoints are
    /// off, nor while other processes' readers are seen.
    fn set_full_frames(&self, shared: &Shared) {
        let off = self.readers_seen() || shared.threshold.load(Ordering::Relaxed) <= 0;
        let frames = if off { 0 } else { FULL_AT / self.frame_bytes };
        shared.full_frames.store(frames, Ordering::Relaxed);
    }

    fn checkpoint_if_due(&mut self, shared: &Shared) {
        let threshold = i64::from(shared.threshold.load(Ordering::Relaxed));
        if threshold <= 0 {
            // wal_autocheckpoint is off: no automatic checkpoint at all, as in SQLite.
            self.unpin(shared);
            return;
        }
        let commits = shared.commits.load(Ordering::Relaxed);
        if commits != self.commits_seen {
            self.commits_seen = commits;
            self.last_commit = Instant::now();
            self.idle_done = false;
            // The commit that followed a complete checkpoint appended: the pin is done.
            self.unpin(shared);
        }
        let frames = shared.frames.load(Ordering::Relaxed);
        let at = shared.wake_at.load(Ordering::Relaxed);
        // Also when another connection restarted the WAL under the count.
        let due = frames >= at + threshold || frames < at;
        let retry = self.retry_at.is_some_and(|t| Instant::now() >= t);
        let idle = !self.idle_done && self.last_commit.elapsed() >= IDLE;
        if !(due || retry || idle) {
            return;
        }
        self.retry_at = None;
        if let Err(e) = self.checkpoint_round(shared, idle) {
            self.unpin(shared);
            if busy(&e) {
                shared.status().busy += 1;
                self.retry_at = Some(Instant::now() + RETRY);
            } else {
                self.failed(shared, &e);
                self.retry_at = Some(Instant::now() + FAILURE_RETRY);
            }
        }
    }

    /// One round: pin, PASSIVE checkpoint, and a restart when due.
    fn checkpoint_round(&mut self, shared: &Shared, idle: bool) -> SResult<()> {
        let restart_at = self.restart_at(shared);
        shared.status().restart_at = restart_at;
        let (mut log, mut done) = self.passive(shared)?;
        if log > shared.frames.load(Ordering::Relaxed).max(self.writer_frames) {
            // Frames the store did not write: other processes write to the file too.
            let until = Some(Instant::now() + READERS_SEEN);
            (self.writers_until, self.readers_until) = (until, until);
        }
        let mut wal = log;
        if log * self.frame_bytes >= restart_at {
            // Writers wait while a RESTART checkpoint runs: first copy what the store
            // wrote during the last pass, until what is left is short.
            for _ in 0..CATCH_UP_PASSES {
                // A WAL this much past the restart size (the store writes faster than
                // this thread copies) is restarted now, even if writers then wait longer.
                if log == done || log * self.frame_bytes >= restart_at + restart_at / 2 {
                    break;
                }
                let previous = done;
                (log, done) = self.passive(shared)?;
                if log - previous <= CATCH_UP_TAIL {
                    break;
                }
            }
            self.presync();
            wal = self.restart(shared)?;
        } else if idle {
            if log > 0 && log == done {
                wal = self.restart(shared)?;
            }
            // The WAL now ends with this thread's frame, is empty, or readers hold it:
            // nothing more to do until the store commits again.
            self.idle_done = true;
            self.unpin(shared);
        } else if log != done {
            // Not fully copied: the store's next commit appends anyway, no pin needed.
            self.unpin(shared);
        }
        // Otherwise the pin stays until the store's next commit has appended.
        shared.wake_at.store(wal, Ordering::Relaxed);
        Ok(())
    }

    /// The WAL size (bytes) from which it is restarted: [`RESTART_AT`], or the store
    /// connection's `journal_size_limit` when that is smaller (but at least one
    /// `wal_autocheckpoint`'s worth of frames). Also gives the writer connection the limit.
    fn restart_at(&mut self, shared: &Shared) -> i64 {
        let limit = shared.journal_limit.load(Ordering::Relaxed);
        let set = || {
            self.writer
                .query_row(&format!("PRAGMA journal_size_limit = {limit}"), [], |_| Ok(()))
                .is_ok()
        };
        if limit != self.journal_limit && set() {
            self.journal_limit = limit;
        }
        let floor = i64::from(shared.threshold.load(Ordering::Relaxed).max(1)) * self.frame_bytes;
        let at = if limit < 0 {
            RESTART_AT
        } else {
            limit.clamp(floor.min(RESTART_AT), RESTART_AT)
        };
        // With other processes' readers each restart stops the writes for about one of
        // their snapshots: fewer, larger restarts (the wait stays the same below BOUND / 2).
        if self.readers_seen() && !self.writers_seen() {
            at / 2 * 3
        } else {
            at
        }
    }

    fn readers_seen(&self) -> bool {
        self.readers_until.is_some_and(|t| Instant::now() < t)
    }

    fn writers_seen(&self) -> bool {
        self.writers_until.is_some_and(|t| Instant::now() < t)
    }

    /// Syncs the database file and the WAL before a restart: the checkpoint that writers
    /// wait for then syncs only what was written since (a pass that did not reach the
    /// WAL's end leaves the database file unsynced). A failure here is left to SQLite's
    /// own syncs, which report it.
    fn presync(&self) {
        for name in [self.path.clone(), format!("{}-wal", self.path)] {
            if let Ok(file) = std::fs::File::open(&name) {
                let _ = file.sync_data();
            }
        }
    }

    /// A fresh pin, then a PASSIVE checkpoint: (frames in the WAL, frames copied back).
    fn passive(&mut self, shared: &Shared) -> SResult<(i64, i64)> {
        self.pin(shared);
        let (_, log, done) = self.checkpoint("PASSIVE")?;
        self.record(shared, log, done);
        Ok((log, done))
    }

    /// `PRAGMA wal_checkpoint(mode)`: (busy, frames in the WAL, frames copied back).
    fn checkpoint(&self, mode: &str) -> SResult<(i64, i64, i64)> {
        BUSY_SINCE.with(|s| s.set(None));
        Ok(self
            .conn
            .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?)
    }

    fn record(&self, shared: &Shared, log: i64, done: i64) {
        let mut status = shared.status();
        status.checkpoints += 1;
        status.wal_frames = log;
        status.backfilled = done;
        status.wal_peak = status.wal_peak.max(log.max(0) * self.frame_bytes);
    }

    /// Restarts the WAL from this thread: the writer connection takes the write lock
    /// (the store's writes wait from here on), the rest of the WAL is copied back (waiting
    /// up to [`wait_for`] for readers that still use its frames), and the writer's
    /// first commit then starts the WAL anew, with its header synced here. Returns the
    /// WAL's frames afterwards.
    fn restart(&mut self, shared: &Shared) -> SResult<i64> {
        // The store's writes wait for the restart in any case (for the write lock); at the
        // gate they go on the moment it ends, rather than at their busy handler's next try.
        // The gate is closed before any lock is taken (a write in it may be waiting for
        // the write lock). With other processes writing too, any of them may restart the
        // WAL between this thread's checkpoint and its frame: holding the store's writes
        // back would then only cost them, and starve them of the write lock.
        let gate = self.gate.clone();
        let closed = (!self.writers_seen()).then(|| gate.close());
        if self.readers_seen() {
            return self.restart_after_readers(shared);
        }
        self.last_wait = Duration::ZERO;
        if let Err(e) = self.writer.execute_batch("BEGIN IMMEDIATE") {
            let e = StoreError::from(e);
            if busy(&e) {
                // Another connection held the write lock all along (another process,
                // as a rule): the next tries are the RESTART checkpoint's.
                self.readers_until = Some(Instant::now() + READERS_SEEN);
            }
            return Err(e);
        }
        let result = self.restart_holding_lock(shared);
        if !self.writer.is_autocommit() {
            let _ = self.writer.execute_batch("ROLLBACK");
        }
        self.unpin(shared);
        drop(closed);
        result
    }

    fn restart_holding_lock(&mut self, shared: &Shared) -> SResult<i64> {
        let (_, mut log, mut done) = self.checkpoint("NOOP")?;
        if log != done {
            // The writer's read began before the WAL was fully copied, so its commit
            // would append. A pin taken now (at the WAL's last frame) keeps the store
            // from restarting the WAL in the moment between the writer's two
            // transactions; the store's commit in that moment appends instead.
            self.pin(shared);
            self.last_wait = wait_for(log * self.frame_bytes);
            let deadline = Instant::now() + self.last_wait;
            loop {
                (_, log, done) = self.checkpoint("PASSIVE")?;
                self.record(shared, log, done);
                if log == done {
                    break;
                }
                if Instant::now() >= deadline {
                    // Other processes' readers hold the frames: the next tries wait for
                    // them with a RESTART checkpoint.
                    self.readers_until = Some(Instant::now() + READERS_SEEN);
                    return Ok(self.restart_busy(shared, log));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            self.writer.execute_batch("ROLLBACK")?;
            self.writer.execute_batch("BEGIN IMMEDIATE")?;
            (_, log, done) = self.checkpoint("NOOP")?;
            if log != done {
                // The store committed in between: try again in a moment.
                return Ok(self.restart_busy(shared, log));
            }
        }
        if log == 0 {
            return Ok(0);
        }
        self.unpin(shared);
        let conn = &self.writer;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        conn.execute_batch(&format!("PRAGMA user_version = {version}"))?;
        conn.execute_batch("COMMIT")?;
        let (_, log, _) = self.checkpoint("NOOP")?;
        self.writer_frames = log;
        if log <= 1 {
            shared.status().restarts += 1;
            self.retry_at = None;
            Ok(log)
        } else {
            // Other processes' readers held WAL read locks, so the commit appended. The
            // next tries wait for them with a RESTART checkpoint.
            self.readers_until = Some(Instant::now() + READERS_SEEN);
            Ok(self.restart_busy(shared, log))
        }
    }

    /// The restart when other processes read the file: a RESTART checkpoint takes the
    /// write lock, copies the rest of the WAL and waits (up to [`wait_for`]) until no
    /// reader uses the WAL; the writer connection then commits its first frame. The
    /// checkpoint lets go of the write lock when it returns: the restart gate (closed by
    /// [`Self::restart`] until that frame is committed) keeps the store's connection from
    /// writing (and restarting the WAL itself) in between. The pins go first: the RESTART
    /// checkpoint waits for them as for any reader, and so do other processes' (their
    /// threads let go of their pins when they try a restart, or are idle).
    fn restart_after_readers(&mut self, shared: &Shared) -> SResult<i64> {
        self.unpin(shared);
        self.mark_newest();
        let (_, log, _) = self.checkpoint("NOOP")?;
        // After a try that readers outlasted, the next one waits twice as long (within
        // WAITS): a try that gives up stopped the writes for nothing. Not with other
        // processes writing, whose stores wait for the write lock meanwhile.
        let longer = if self.writers_seen() {
            Duration::ZERO
        } else {
            self.outlasted * 2
        };
        self.last_wait = wait_for(log * self.frame_bytes).max(longer).min(WAITS[3]);
        let result = if self.writers_seen() {
            // Other processes' stores wait for the write lock in SQLite's busy handler:
            // this one does too, rather than win every race for it.
            self.conn.busy_timeout(self.last_wait)?;
            let result = self.checkpoint("RESTART");
            self.conn.busy_handler(Some(on_busy))?;
            result
        } else {
            BUSY_LIMIT.with(|l| l.set(self.last_wait));
            let result = self.checkpoint("RESTART");
            BUSY_LIMIT.with(|l| l.set(SIDE_BUSY));
            result
        };
        let (busy, log, done) = result?;
        self.record(shared, log, done);
        if log > 0 && log == done && (busy == 0 || !self.writers_seen()) {
            // Copied to its end: the writer's frame restarts the WAL, or (a reader still
            // holds it) appends, so that the store's next commit appends too.
            let written = self.write_first_frame();
            if written.is_err() && !self.writer.is_autocommit() {
                let _ = self.writer.execute_batch("ROLLBACK");
            }
            written?;
        }
        let (_, log, _) = self.checkpoint("NOOP")?;
        if busy != 0 || log > 1 {
            self.outlasted = self.last_wait;
            return Ok(self.restart_busy(shared, log));
        }
        self.outlasted = Duration::ZERO;
        shared.status().restarts += 1;
        self.retry_at = None;
        Ok(log)
    }

    /// Begins and ends a read on a free pin connection, just before a RESTART checkpoint.
    /// A read that finds no read mark at the WAL's last frame moves the first one it can
    /// lock there: while no reader holds it, read lock 1's, the mark checkpoints move
    /// themselves. A RESTART that finds that mark behind waits to lock it, while a reader
    /// that begins meanwhile may move it to the last frame itself and the readers after it
    /// share it: with snapshots that overlap, it may not come free before the RESTART
    /// gives up. With the mark already at the last frame, the RESTART does not wait for it.
    fn mark_newest(&self) {
        if begin_read(&self.pins[0]) {
            let _ = self.pins[0].execute_batch("COMMIT");
        }
    }

    /// At the start: a WAL that is empty or copied to its end (a file just opened) gets
    /// its first frame from this thread, so that the store's first commit appends rather
    /// than write and sync the WAL's header. A failure is left to the rounds.
    fn prime(&mut self) {
        let copied = matches!(self.checkpoint("NOOP"), Ok((_, log, done)) if log == done);
        if copied && self.write_first_frame().is_err() && !self.writer.is_autocommit() {
            let _ = self.writer.execute_batch("ROLLBACK");
        }
    }

    /// One page in its own transaction (page 1, unchanged): a restarted WAL's first frame.
    fn write_first_frame(&mut self) -> SResult<()> {
        let conn = &self.writer;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        conn.execute_batch(&format!("PRAGMA user_version = {version}"))?;
        conn.execute_batch("COMMIT")?;
        self.writer_frames = self.checkpoint("NOOP")?.1;
        Ok(())
    }

    /// A restart that readers (or the store's commit) kept from completing.
    fn restart_busy(&mut self, shared: &Shared, log: i64) -> i64 {
        shared.status().busy += 1;
        // Writers waited up to `last_wait`: the next try comes after twice that, so that a
        // reader that never lets go costs writers at most a third of the time.
        self.retry_at = Some(Instant::now() + RETRY.max(self.last_wait * 2));
        log
    }

    /// Opens a read transaction on the free pin connection, then ends the other one's.
    fn pin(&mut self, shared: &Shared) {
        let next = self.pinned.map_or(0, |i| 1 - i);
        if !begin_read(&self.pins[next]) {
            return;
        }
        if let Some(old) = self.pinned.replace(next) {
            let _ = self.pins[old].execute_batch("COMMIT");
        }
        shared.pinned.store(true, Ordering::Relaxed);
    }

    fn unpin(&mut self, shared: &Shared) {
        if let Some(old) = self.pinned.take() {
            let _ = self.pins[old].execute_batch("COMMIT");
        }
        shared.pinned.store(false, Ordering::Relaxed);
    }

    fn failed(&mut self, shared: &Shared, e: &StoreError) {
        let message = describe(e);
        {
            let mut status = shared.status();
            status.failures += 1;
            status.last_error = Some(message.clone());
        }
        if self.last_report.is_none_or(|at| at.elapsed() >= REPORT_EVERY) {
            self.last_report = Some(Instant::now());
            let frames = shared.frames.load(Ordering::Relaxed);
            eprintln!(
                "[triflux-native-store] checkpoint of {} failed: {} (the WAL keeps {} KiB; nothing is lost; retrying)",
                self.path.escape_debug(),
                message.escape_debug(),
                frames * self.frame_bytes / 1024,
            );
        }
    }
}

/// [`WAITS`] for a WAL of `bytes`.
fn wait_for(bytes: i64) -> Duration {
    let level = match bytes {
        b if b < BOUND / 4 => 0,
        b if b < BOUND / 2 => 1,
        b if b < BOUND / 4 * 3 => 2,
        _ => 3,
    };
    WAITS[level]
}

fn busy(e: &StoreError) -> bool {
    matches!(e, StoreError::Sqlite { code, .. } if code & 0xff == rusqlite::ffi::SQLITE_BUSY)
}

fn describe(e: &StoreError) -> String {
    match e {
        StoreError::Sqlite { code, message } => {
            let text = message.clone().unwrap_or_else(|| raw::errstr(*code));
            format!("{text} (SQLite code {code})")
        }
        StoreError::Js { message, .. } => message.clone(),
        StoreError::Pending => "an exception".to_string(),
    }
}
