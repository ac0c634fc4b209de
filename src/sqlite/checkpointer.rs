//! Checkpoints off the caller's thread, and a WAL that stays bounded (docs/writes.md).
//!
//! SQLite's automatic checkpoint runs inside the commit that pushes the WAL past
//! `wal_autocheckpoint` pages: the caller pays for copying the pages back and for two
//! syncs. Here the store's connection gets a WAL hook instead ([`raw::WalHook`]) that only
//! wakes a thread of its own; that thread has its own connections to the file and does
//! every checkpoint and every sync of the WAL's life cycle:
//!
//! * **Checkpoints** (PASSIVE) each time the store's commits have added
//!   `wal_autocheckpoint` frames, while the store goes on writing.
//! * **Restarts.** The first commit into a restarted WAL writes a new WAL header and syncs
//!   it, on whichever thread commits, so the store's connection is never let restart the
//!   WAL: before each checkpoint the thread opens a read transaction on a pin connection,
//!   whose WAL read lock makes the store's next commit append rather than restart; the
//!   pin is let go once that commit has appended (the WAL is then no longer fully copied)
//!   or when the thread restarts the WAL itself. It does so once the WAL holds
//!   [`RESTART_AT`] bytes (or the connection's smaller `journal_size_limit`), and when the
//!   store has been idle for [`IDLE`]: its writer connection takes the write lock, the
//!   rest of the WAL is copied back, and the writer commits one page (page 1 unchanged:
//!   `PRAGMA user_version` set to its value), which starts the WAL anew. The store's
//!   writes wait for that (within their busy_timeout): the only time they do.
//! * **The bound.** Readers (other processes) whose snapshots still need the WAL's frames
//!   keep it from being copied to its end. A restart then waits for them, while holding
//!   the write lock, for [`WAITS`] (longer as the WAL nears [`BOUND`]); new readers meanwhile
//!   start at the WAL's last frame, so snapshots held in turn still end. One that did not
//!   complete is tried again after twice its wait, so a reader that never lets go
//!   costs writers at most a third of their time.
//! * **Failures** (a full disk, an I/O error) lose nothing: the frames stay in the WAL,
//!   where every reader still finds them, and the next round tries again. They are counted
//!   in [`Status`] and reported on stderr (the first, then at most one a minute).
//!
//! The thread stops and is joined when the [`Checkpointer`] is dropped, which the store's
//! connection does after closing its own SQLite connection. It never calls into Node, so
//! a process that exits with it running (process.exit, a store never closed) just ends it.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::raw::{self, WalHook, WalListener};
use crate::error::{SResult, StoreError};

/// The WAL size (bytes of frames) from which the thread restarts the WAL.
pub const RESTART_AT: i64 = 16 * 1024 * 1024;
/// The documented bound: with readers whose snapshots last less than the longest wait,
/// the WAL is restarted well before it reaches this.
pub const BOUND: i64 = 64 * 1024 * 1024;
/// How long a restart waits for readers (writers wait meanwhile), by how full the WAL is:
/// under 1/4 of [`BOUND`], under 1/2, under 3/4, and beyond.
pub const WAITS: [Duration; 4] = [
    Duration::from_millis(20),
    Duration::from_millis(80),
    Duration::from_millis(320),
    Duration::from_millis(1280),
];
/// For this long after other processes' readers kept a restart from completing, restarts
/// wait for readers with a RESTART checkpoint.
const READERS_SEEN: Duration = Duration::from_secs(30);
/// How soon a restart that readers kept from completing is tried again (at the least).
pub const RETRY: Duration = Duration::from_millis(25);
/// With no commit for this long, the thread checkpoints what is left and restarts the
/// WAL (a hub between bursts leaves a short, fully copied WAL behind).
pub const IDLE: Duration = Duration::from_millis(100);
/// Before a RESTART checkpoint, at most this many more PASSIVE passes, until one finds
/// at most `CATCH_UP_TAIL` new frames.
const CATCH_UP_PASSES: usize = 4;
const CATCH_UP_TAIL: i64 = 500;
/// After a failed checkpoint (not a busy one), the next try.
const FAILURE_RETRY: Duration = Duration::from_millis(500);
/// The thread's connections' busy_timeout outside a RESTART checkpoint.
const SIDE_BUSY: Duration = Duration::from_millis(50);
/// How long an explicit checkpoint waits for the thread to finish its round.
const PAUSE_WAIT: Duration = Duration::from_secs(5);
/// How long the thread sleeps when nothing wakes it.
const TICK: Duration = Duration::from_millis(50);
/// Stderr reports of failures: the first, then at most one per this long.
const REPORT_EVERY: Duration = Duration::from_secs(60);
/// The WAL frame header in front of every page.
const FRAME_HEADER: i64 = 24;

/// What the thread has done, for `checkpointStatus` and `triflux-store info`.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Checkpoints that ran to their end (PASSIVE or RESTART).
    pub checkpoints: u64,
    /// Times the thread restarted the WAL.
    pub restarts: u64,
    /// RESTART checkpoints that readers or writers kept from completing in their wait.
    pub busy: u64,
    /// Checkpoints or restarts that failed with an error (nothing is lost: see above).
    pub failures: u64,
    /// The last failure's SQLite message, if any.
    pub last_error: Option<String>,
    /// The largest WAL seen (bytes of frames).
    pub wal_peak: i64,
    /// The WAL's frames and how many of them were copied back, at the last checkpoint.
    pub wal_frames: i64,
    pub backfilled: i64,
    /// The thread runs (false once stopped, or if it could not start).
    pub running: bool,
}

#[derive(Default)]
struct Wake {
    stop: bool,
    /// Explicit checkpoints on the store's connection in progress: the thread holds no
    /// pin and runs no checkpoint meanwhile.
    explicit: u32,
    /// The thread acknowledged `explicit` (it is between rounds, without a pin).
    paused: bool,
}

/// What the store's connection and the thread share.
struct Shared {
    wake: Mutex<Wake>,
    cv: Condvar,
    /// The store's commits so far and the WAL's frames after the last of them.
    commits: AtomicU64,
    frames: AtomicI64,
    /// The WAL's frames after the last round: a commit that adds `threshold` to them
    /// wakes the thread.
    wake_at: AtomicI64,
    /// `wal_autocheckpoint`, shared with the hook (0 or less: off).
    threshold: Arc<AtomicI32>,
    /// The store connection's `journal_size_limit` (-1: none): the restart write
    /// truncates the WAL to it, and a WAL larger than it is restarted (from one
    /// `wal_autocheckpoint`'s worth of frames up to [`RESTART_AT`]).
    journal_limit: AtomicI64,
    /// The thread holds a pin that the next commit makes unnecessary: wake it then.
    pinned: AtomicBool,
    /// A wake-up was sent and not yet taken (one notify per round, not per commit).
    signaled: AtomicBool,
    status: Mutex<Status>,
}

impl Shared {
    fn notify(&self) {
        if !self.signaled.swap(true, Ordering::AcqRel) {
            let _guard = self.wake.lock().unwrap_or_else(|e| e.into_inner());
            self.cv.notify_all();
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl WalListener for Shared {
    fn committed(&self, frames: c_int, threshold: c_int) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.frames.store(i64::from(frames), Ordering::Relaxed);
        let due = i64::from(frames) >= self.wake_at.load(Ordering::Relaxed) + i64::from(threshold);
        if due || self.pinned.load(Ordering::Relaxed) {
            self.notify();
        }
    }

    fn journal_size_limit(&self, bytes: i64) {
        self.journal_limit.store(bytes, Ordering::Relaxed);
    }

    fn explicit_checkpoint(&self, starting: bool) {
        let mut wake = self.wake.lock().unwrap_or_else(|e| e.into_inner());
        if starting {
            wake.explicit += 1;
            self.cv.notify_all();
            // The thread finishes its round first (a RESTART waits at most WAITS' last).
            let deadline = Instant::now() + PAUSE_WAIT;
            while !wake.paused && !wake.stop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                wake = self.cv.wait_timeout(wake, left).unwrap_or_else(|e| e.into_inner()).0;
            }
        } else {
            wake.explicit = wake.explicit.saturating_sub(1);
            self.cv.notify_all();
        }
    }
}

/// The store connection's checkpointer: its WAL hook and its thread.
pub struct Checkpointer {
    shared: Arc<Shared>,
    hook: WalHook,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread for the file `path` that `conn` (the store's connection, in
    /// WAL mode) has open, and installs the hook on `conn` with the connection's current
    /// `wal_autocheckpoint` as its threshold. The thread's connections are opened here,
    /// so a file they cannot open leaves `conn` with SQLite's own checkpoints.
    pub fn start(conn: &Connection, path: &str) -> SResult<Checkpointer> {
        let threshold: i32 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))?;
        let journal_limit = raw::journal_size_limit(conn).unwrap_or(-1);
        let threshold = Arc::new(AtomicI32::new(threshold));
        let worker = Worker::open(path)?;
        let shared = Arc::new(Shared {
            wake: Mutex::default(),
            cv: Condvar::new(),
            commits: AtomicU64::new(0),
            frames: AtomicI64::new(0),
            wake_at: AtomicI64::new(0),
            threshold: threshold.clone(),
            journal_limit: AtomicI64::new(journal_limit),
            pinned: AtomicBool::new(false),
            signaled: AtomicBool::new(false),
            status: Mutex::new(Status {
                running: true,
                ..Status::default()
            }),
        });
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("triflux-checkpoint".into())
            .spawn(move || worker.run(&for_thread))
            .map_err(|e| StoreError::error(format!("could not start the checkpoint thread: {e}")))?;
        let hook = WalHook::install(conn, threshold, shared.clone());
        Ok(Checkpointer {
            shared,
            hook,
            thread: Some(thread),
        })
    }

    pub fn status(&self) -> Status {
        self.shared.status().clone()
    }

    /// The `wal_autocheckpoint` threshold `store.db` reads (in frames; 0: off).
    pub fn threshold(&self) -> i32 {
        self.hook.threshold()
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.wake.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.shared.cv.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's side: its connections and where it is.
struct Worker {
    path: String,
    /// Checkpoints.
    conn: Connection,
    /// Holds the write lock while the WAL is restarted, and writes its first frame.
    writer: Connection,
    /// Two pin connections, so that a new pin is taken before the old one is let go.
    pins: [Connection; 2],
    pinned: Option<usize>,
    frame_bytes: i64,
    /// The `journal_size_limit` the writer connection has.
    journal_limit: i64,
    /// The wait of the last restart that readers kept from completing.
    last_wait: Duration,
    /// Until then, restarts wait for other processes' readers (see `restart_after_readers`).
    readers_until: Option<Instant>,
    commits_seen: u64,
    last_commit: Instant,
    /// The WAL was restarted (or found empty) since the last commit: nothing to do idle.
    idle_done: bool,
    /// A restart that did not complete: try again after [`RETRY`].
    retry_at: Option<Instant>,
    last_report: Option<Instant>,
}

fn open_side(path: &str) -> SResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    // Small caches: the thread reads page 1 and the WAL's frames, nothing else.
    conn.execute_batch("PRAGMA cache_size = -64")?;
    conn.busy_timeout(SIDE_BUSY)?;
    Ok(conn)
}

impl Worker {
    fn open(path: &str) -> SResult<Worker> {
        let conn = open_side(path)?;
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
            frame_bytes: page + FRAME_HEADER,
            journal_limit: -1,
            last_wait: Duration::ZERO,
            readers_until: None,
            commits_seen: 0,
            last_commit: Instant::now(),
            idle_done: false,
            retry_at: None,
            last_report: None,
        })
    }

    fn run(mut self, shared: &Shared) {
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
        let (mut log, mut done) = self.passive(shared)?;
        let mut wal = log;
        if log * self.frame_bytes >= restart_at {
            // Writers wait while a RESTART checkpoint runs: first copy what the store
            // wrote during the last pass, until what is left is short.
            for _ in 0..CATCH_UP_PASSES {
                // A WAL this large is restarted now, even if writers then wait longer.
                if log == done || log * self.frame_bytes >= BOUND / 2 {
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
        if limit != self.journal_limit {
            if self
                .writer
                .query_row(&format!("PRAGMA journal_size_limit = {limit}"), [], |_| Ok(()))
                .is_ok()
            {
                self.journal_limit = limit;
            }
        }
        let floor = i64::from(shared.threshold.load(Ordering::Relaxed).max(1)) * self.frame_bytes;
        if limit < 0 {
            RESTART_AT
        } else {
            limit.clamp(floor.min(RESTART_AT), RESTART_AT)
        }
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
    /// up to `WAITS[level]` for readers that still use its frames), and the writer's
    /// first commit then starts the WAL anew, with its header synced here. Returns the
    /// WAL's frames afterwards.
    fn restart(&mut self, shared: &Shared) -> SResult<i64> {
        if self.readers_until.is_some_and(|t| Instant::now() < t) {
            return self.restart_after_readers(shared);
        }
        self.last_wait = Duration::ZERO;
        self.writer.execute_batch("BEGIN IMMEDIATE")?;
        let result = self.restart_holding_lock(shared);
        if !self.writer.is_autocommit() {
            let _ = self.writer.execute_batch("ROLLBACK");
        }
        self.unpin(shared);
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
    /// reader uses the WAL; the writer connection then commits at once, before the
    /// store's writes (held by the checkpoint, asleep in their busy handler) retry.
    fn restart_after_readers(&mut self, shared: &Shared) -> SResult<i64> {
        self.unpin(shared);
        let (_, log, _) = self.checkpoint("NOOP")?;
        self.last_wait = wait_for(log * self.frame_bytes);
        self.conn.busy_timeout(self.last_wait)?;
        let result = self.checkpoint("RESTART");
        self.conn.busy_timeout(SIDE_BUSY)?;
        let (busy, log, done) = result?;
        self.record(shared, log, done);
        if busy != 0 || log != done {
            return Ok(self.restart_busy(shared, log));
        }
        let written = self.write_first_frame();
        if written.is_err() && !self.writer.is_autocommit() {
            let _ = self.writer.execute_batch("ROLLBACK");
        }
        written?;
        let (_, log, _) = self.checkpoint("NOOP")?;
        if log > 1 {
            return Ok(self.restart_busy(shared, log));
        }
        shared.status().restarts += 1;
        self.retry_at = None;
        Ok(log)
    }

    /// One page in its own transaction (page 1, unchanged): a restarted WAL's first frame.
    fn write_first_frame(&self) -> SResult<()> {
        let conn = &self.writer;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        conn.execute_batch(&format!("PRAGMA user_version = {version}"))?;
        conn.execute_batch("COMMIT")?;
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
        let pin = &self.pins[next];
        let began = pin.execute_batch("BEGIN").is_ok()
            && pin
                .query_row("SELECT 1 FROM sqlite_schema LIMIT 1", [], |_| Ok(()))
                .optional()
                .is_ok();
        if !began {
            let _ = pin.execute_batch("ROLLBACK");
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
