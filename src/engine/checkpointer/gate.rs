//! The restart gate of a connection with a checkpointer (part of `checkpointer`).
//!
//! The first commit into a restarted WAL writes the WAL's header and syncs it, on the
//! committing thread. The checkpoint thread restarts the WAL itself, in two steps that
//! SQLite cannot make one (a `RESTART` checkpoint, which lets go of the write lock when it
//! returns, then its own first commit); a write of the store's connection between the
//! two would restart the WAL on the event loop. The gate closes that moment: the thread
//! holds it from before its checkpoint until its first frame is committed, and every
//! step of the store's connection that may begin a write (a statement that writes, a
//! `BEGIN`) passes through it, unless the connection already holds the write lock (then
//! the thread's restart waits for that transaction, and waiting for the gate could only
//! stall both). A step holds the gate only while SQLite runs it, never across JS, and an
//! open gate costs one uncontended mutex.
//!
//! The same gate bounds the WAL when the store writes faster than the thread copies: once
//! a commit leaves the WAL past a size the thread sets (see the checkpointer), the next
//! write waits at the gate until the thread has restarted the WAL, for [`FULL_WAIT`] at
//! most.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

use crate::error::SResult;
use crate::ffi::sqlite::{client_data, Db};

/// The name the gate is kept under in its connection (`sqlite3_set_clientdata`).
const NAME: &CStr = c"triflux-native-store.restart-gate";

/// See the module's comment.
#[derive(Default)]
pub struct RestartGate {
    lock: Mutex<()>,
    /// The WAL is past the size at which the store's writes wait for the thread's next
    /// restart (it outran the thread): set after a commit, cleared by the thread.
    full: AtomicBool,
    restarted: Condvar,
}

impl RestartGate {
    /// Closes the gate until the guard is dropped; waits for a step that is in it.
    pub fn close(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// After a commit that left the WAL past that size: the next write waits.
    pub fn set_full(&self) {
        self.full.store(true, Ordering::Relaxed);
    }

    /// The thread restarted the WAL (or tried): writes waiting for it go on. Takes the
    /// gate for a moment (it must not be closed by the caller already), so that a write
    /// between its check and its wait cannot miss this.
    pub fn release_full(&self) {
        if self.full.load(Ordering::Relaxed) {
            let _closed = self.close();
            self.full.store(false, Ordering::Relaxed);
            self.restarted.notify_all();
        }
    }

    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Passes the gate: waits while it is closed, and while the WAL is full (at most
    /// [`FULL_WAIT`]).
    fn pass(&self) -> MutexGuard<'_, ()> {
        let open = self.close();
        if !self.is_full() {
            return open;
        }
        self.restarted
            .wait_timeout_while(open, FULL_WAIT, |_| self.is_full())
            .unwrap_or_else(|e| e.into_inner())
            .0
    }
}

/// The longest a write waits for a restart of a full WAL (the thread then is stuck, e.g.
/// in a sync of a failing disk: the writes go on and the WAL grows).
pub const FULL_WAIT: Duration = Duration::from_millis(1500);

/// Makes every step of `conn` that may begin a write pass through `gate`, until the
/// connection is closed (which lets go of its reference).
pub fn install(conn: &Connection, gate: Arc<RestartGate>) -> SResult<()> {
    client_data::set(conn, NAME, gate)
}

thread_local! {
    /// This thread is inside a gated step (a user callback stepping another statement
    /// of the same connection must not wait for the gate it holds).
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a step on `db`) through `db`'s restart gate when it has one, `may_write` is
/// set and the connection does not hold the write lock already.
pub(super) fn through<T>(db: Db<'_>, may_write: bool, f: impl FnOnce() -> T) -> T {
    if !may_write || INSIDE.with(Cell::get) {
        return f();
    }
    let Some(gate) = client_data::get::<RestartGate>(db, NAME) else {
        return f();
    };
    if db.writing() {
        return f();
    }
    let _open = gate.pass();
    INSIDE.with(|c| c.set(true));
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            INSIDE.with(|c| c.set(false));
        }
    }
    let _leave = Leave;
    f()
}

/// Whether `sql` (one statement) starts with `BEGIN`.
pub fn is_begin(sql: &[u8]) -> bool {
    let start = sql.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(sql.len());
    sql.len() - start >= 5 && sql[start..start + 5].eq_ignore_ascii_case(b"begin")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use rusqlite::Connection;

    use super::{install, is_begin, through, RestartGate};
    use crate::ffi::sqlite::db_of;

    /// A write step on `conn`.
    fn gated(conn: &Connection, f: impl FnOnce()) {
        through(db_of(conn), true, f)
    }

    #[test]
    fn begin_is_recognised_by_its_first_word() {
        assert!(is_begin(b"BEGIN"));
        assert!(is_begin(b"  begin immediate"));
        assert!(!is_begin(b"SELECT 'begin'"));
        assert!(!is_begin(b"BEG"));
    }

    #[test]
    fn a_write_waits_while_the_gate_is_closed_and_a_connection_without_one_does_not() {
        let conn = Connection::open_in_memory().unwrap();
        let gate = Arc::new(RestartGate::default());
        install(&conn, gate.clone()).unwrap();
        let plain = Connection::open_in_memory().unwrap();
        let (closed_tx, closed_rx) = std::sync::mpsc::channel();
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let for_thread = gate.clone();
        let holder = std::thread::spawn(move || {
            let closed = for_thread.close();
            closed_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            opened_tx.send(Instant::now()).unwrap();
            drop(closed);
        });
        closed_rx.recv().unwrap();
        let started = Instant::now();
        gated(&plain, || ());
        assert!(started.elapsed() < Duration::from_millis(40), "no gate, no wait");
        gated(&conn, || ());
        let passed = Instant::now();
        assert!(
            passed >= opened_rx.recv().unwrap(),
            "the write went through once the gate opened"
        );
        holder.join().unwrap();
        // The connection's reference goes with the connection.
        drop(conn);
        assert_eq!(Arc::strong_count(&gate), 1);
    }

    #[test]
    fn a_full_wal_makes_the_next_write_wait_for_the_thread_and_no_longer() {
        let conn = Connection::open_in_memory().unwrap();
        let gate = Arc::new(RestartGate::default());
        install(&conn, gate.clone()).unwrap();
        gate.set_full();
        let for_thread = gate.clone();
        let released = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            let at = Instant::now();
            for_thread.release_full();
            at
        });
        gated(&conn, || ());
        let passed = Instant::now();
        assert!(passed >= released.join().unwrap(), "waited for the release");
        assert!(!gate.is_full());
        let started = Instant::now();
        gated(&conn, || ());
        assert!(started.elapsed() < Duration::from_millis(40), "released: no wait");
        // Released by nobody: the wait ends at its bound.
        gate.set_full();
        let started = Instant::now();
        gated(&conn, || ());
        assert!(started.elapsed() >= super::FULL_WAIT);
    }
}
