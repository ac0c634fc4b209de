//! Checkpoints off the caller's thread, and a WAL that stays bounded (docs/writes.md).
//!
//! SQLite's automatic checkpoint runs inside the commit that pushes the WAL past
//! `wal_autocheckpoint` pages: the caller pays for copying the pages back and for two
//! syncs. Here the store's connection gets a WAL hook instead (`hook`) that only
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

use rusqlite::Connection;

use crate::error::{SResult, StoreError};
use gate::RestartGate;
use hook::WalListener;
use worker::Worker;

mod connections;
mod gate;
mod hook;
pub mod steps;
mod worker;

/// The WAL size (bytes of frames) from which the thread restarts the WAL.
pub const RESTART_AT: i64 = 16 * 1024 * 1024;
/// The documented bound: with readers whose snapshots last less than the longest wait,
/// the WAL is restarted well before it reaches this.
pub const BOUND: i64 = 64 * 1024 * 1024;
/// The WAL size (bytes of frames) past which the store's writes wait at the restart gate
/// for the thread's next restart, when the store writes faster than the thread copies
/// (never while other processes' readers are seen: a restart may then wait for them).
pub const FULL_AT: i64 = BOUND / 2;
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
/// How often the checkpoint connection looks again while it waits for a lock.
const BUSY_POLL: Duration = Duration::from_millis(1);
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
    /// The WAL size from which the thread restarts it now (0 before the first round).
    pub restart_at: i64,
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
    /// The WAL's frames from which a commit makes the next write wait for a restart
    /// ([`FULL_AT`]; 0: never), and the gate they wait at.
    full_frames: AtomicI64,
    gate: Arc<RestartGate>,
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
        let full_at = self.full_frames.load(Ordering::Relaxed);
        let full = full_at > 0 && i64::from(frames) >= full_at;
        if full {
            self.gate.set_full();
        }
        if due || full || self.pinned.load(Ordering::Relaxed) {
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

/// A connection's checkpointer: its thread (its WAL hook and restart gate are kept by the
/// connection itself, until it closes).
pub struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread for the file `path` that `conn` (the store's connection, in
    /// WAL mode) has open, and installs the hook on `conn` with the connection's current
    /// `wal_autocheckpoint` as its threshold. The thread's connections are opened here,
    /// so a file they cannot open leaves `conn` with SQLite's own checkpoints.
    pub fn start(conn: &Connection, path: &str) -> SResult<Checkpointer> {
        let threshold: i32 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))?;
        let journal_limit = hook::journal_size_limit(conn).unwrap_or(-1);
        let threshold = Arc::new(AtomicI32::new(threshold));
        let gate = Arc::new(RestartGate::default());
        let worker = Worker::open(path, gate.clone())?;
        gate::install(conn, gate.clone())?;
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
            full_frames: AtomicI64::new(0),
            gate,
            status: Mutex::new(Status {
                running: true,
                ..Status::default()
            }),
        });
        let for_thread = shared.clone();
        let (started, gate_closed) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("triflux-checkpoint".into())
            .spawn(move || worker.run(&for_thread, started))
            .map_err(|e| StoreError::error(format!("could not start the checkpoint thread: {e}")))?;
        // The thread's first step closes the gate (see `Worker::run`): the store's first
        // write comes after it.
        let _ = gate_closed.recv();
        let checkpointer = Checkpointer {
            shared: shared.clone(),
            thread: Some(thread),
        };
        // On failure (no memory) the thread is stopped again as `checkpointer` drops.
        hook::install(conn, threshold, shared)?;
        Ok(checkpointer)
    }

    pub fn status(&self) -> Status {
        self.shared.status().clone()
    }

    /// The `wal_autocheckpoint` threshold `store.db` reads (in frames; 0: off).
    pub fn threshold(&self) -> i32 {
        self.shared.threshold.load(Ordering::Relaxed)
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
