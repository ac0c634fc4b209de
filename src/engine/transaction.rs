//! The one transaction guard, for the store's methods and `store.db.transaction(fn)`.
//!
//! `Tx::begin` opens `BEGIN <behavior>`, or a savepoint when a transaction is already
//! open (a store method called inside `db.transaction(fn)`, or a nested
//! `db.transaction`). Dropping a guard that was not committed rolls back what it opened,
//! so every exit path (an error returned with `?`, a panic unwinding through the
//! method) undoes its own writes and nothing else.

use crate::engine::connection::Core;
use crate::error::SResult;

/// When the write lock is taken (SQLite's transaction behaviours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    Deferred,
    Immediate,
    Exclusive,
}

impl Behavior {
    fn begin_sql(self) -> &'static str {
        match self {
            Behavior::Deferred => "BEGIN DEFERRED",
            Behavior::Immediate => "BEGIN IMMEDIATE",
            Behavior::Exclusive => "BEGIN EXCLUSIVE",
        }
    }
}

// better-sqlite3's savepoint name: a caller's SQL can hardly collide with it.
const SAVEPOINT: &str = "SAVEPOINT `\t_bs3.\t`";
const RELEASE: &str = "RELEASE `\t_bs3.\t`";
const ROLLBACK_TO: &str = "ROLLBACK TO `\t_bs3.\t`";

/// Whether a guard opened the outermost transaction or a savepoint inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Outer,
    Savepoint,
}

/// An open transaction or savepoint; rolled back on drop unless committed.
#[must_use = "a transaction guard rolls back when dropped"]
pub struct Tx<'c> {
    core: &'c Core,
    level: Level,
    open: bool,
}

impl<'c> Tx<'c> {
    /// Opens a transaction of `behavior`, or a savepoint when one is already open.
    pub fn begin(core: &'c Core, behavior: Behavior) -> SResult<Self> {
        let level = if core.conn.is_autocommit() {
            Level::Outer
        } else {
            Level::Savepoint
        };
        control(
            core,
            if level == Level::Outer {
                behavior.begin_sql()
            } else {
                SAVEPOINT
            },
        )?;
        Ok(Tx {
            core,
            level,
            open: true,
        })
    }

    /// Takes back a transaction that [`Tx::detach`] handed to JS (`db.transaction(fn)`
    /// opens in one native call and ends in another, with the caller's function between).
    pub fn resume(core: &'c Core, level: Level) -> Self {
        Tx {
            core,
            level,
            open: true,
        }
    }

    /// Leaves the transaction open without a guard; [`Tx::resume`] takes it back.
    pub fn detach(mut self) -> Level {
        self.open = false;
        self.level
    }

    #[cfg(test)]
    pub fn level(&self) -> Level {
        self.level
    }

    /// Commits (or releases the savepoint). On failure everything is rolled back.
    pub fn commit(mut self) -> SResult<()> {
        let sql = if self.level == Level::Outer { "COMMIT" } else { RELEASE };
        control(self.core, sql)?;
        self.open = false;
        Ok(())
    }

    /// Commits; on failure leaves the transaction open, for callers that roll back
    /// themselves (the JS layer's `db.transaction` catch block calls `tx_rollback`).
    pub fn commit_or_detach(mut self) -> SResult<()> {
        self.open = false;
        let sql = if self.level == Level::Outer { "COMMIT" } else { RELEASE };
        control(self.core, sql)
    }

    /// Rolls back explicitly, reporting a failure (dropping the guard ignores it).
    pub fn rollback(mut self) -> SResult<()> {
        self.open = false;
        undo(self.core, self.level)
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // A failure here means SQLite already rolled back (e.g. after SQLITE_FULL
            // or an interrupted write); there is nothing left to undo.
            let _ = undo(self.core, self.level);
        }
    }
}

fn undo(core: &Core, level: Level) -> SResult<()> {
    match level {
        Level::Savepoint => {
            control(core, ROLLBACK_TO)?;
            control(core, RELEASE)
        }
        Level::Outer if !core.conn.is_autocommit() => control(core, "ROLLBACK"),
        Level::Outer => Ok(()),
    }
}

/// Runs a transaction-control statement: kept prepared (parsing them costs more than
/// running them) and stepped as every statement is (a `BEGIN` passes the checkpointer's
/// gate, as it may take the write lock).
fn control(core: &Core, sql: &'static str) -> SResult<()> {
    core.statements.control(&core.conn, sql)
}

/// Runs `f` in a transaction of `behavior` (a savepoint when nested): committed when `f`
/// returns Ok, rolled back on Err or panic.
pub fn in_transaction<T>(core: &Core, behavior: Behavior, f: impl FnOnce() -> SResult<T>) -> SResult<T> {
    let tx = Tx::begin(core, behavior)?;
    let value = f()?;
    tx.commit()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    fn db() -> Core {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(x)").unwrap();
        Core::new(conn, true, false)
    }

    #[test]
    fn dropped_guard_rolls_back_and_commit_keeps() {
        let core = db();
        let conn = &core.conn;
        {
            let _tx = Tx::begin(&core, Behavior::Immediate).unwrap();
            conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
        }
        assert_eq!(count(conn), 0);
        assert!(conn.is_autocommit());
        let tx = Tx::begin(&core, Behavior::Deferred).unwrap();
        conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
        tx.commit().unwrap();
        assert_eq!(count(conn), 1);
    }

    #[test]
    fn nested_guard_undoes_only_its_savepoint_even_on_panic() {
        let core = db();
        let conn = &core.conn;
        let outer = Tx::begin(&core, Behavior::Immediate).unwrap();
        conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let inner = Tx::begin(&core, Behavior::Immediate).unwrap();
            assert_eq!(inner.level(), Level::Savepoint);
            conn.execute("INSERT INTO t VALUES (2)", []).unwrap();
            panic!("injected");
        }));
        assert!(result.is_err());
        assert!(!conn.is_autocommit(), "the outer transaction stays open");
        outer.commit().unwrap();
        assert_eq!(
            count(conn),
            1,
            "the panicking savepoint's row is gone, the outer one kept"
        );
    }

    #[test]
    fn error_in_closure_rolls_back() {
        let core = db();
        let conn = &core.conn;
        let r: SResult<()> = in_transaction(&core, Behavior::Immediate, || {
            conn.execute("INSERT INTO t VALUES (1)", [])?;
            Err(crate::error::StoreError::error("no"))
        });
        assert!(r.is_err());
        assert_eq!(count(conn), 0);
    }

    #[test]
    fn detached_transaction_resumes() {
        let core = db();
        let conn = &core.conn;
        let level = Tx::begin(&core, Behavior::Exclusive).unwrap().detach();
        conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
        Tx::resume(&core, level).rollback().unwrap();
        assert_eq!(count(conn), 0);
        assert!(conn.is_autocommit());
    }
}
