//! The benchmarks' floor: what a store call costs in SQLite alone. While recording (a
//! benchmark turns it on around a series of calls), every statement execution on this
//! thread is kept: its SQL text, the values bound to it and how many times it was
//! stepped (transaction control statements are statements too). [`replay`] then runs the same
//! executions with the same values on another connection from Rust, reading every
//! column of every row, with no JavaScript and no Node-API in between. The difference
//! between a call's time and its floor is the cost of crossing into native code and
//! building the result. Off (the normal case), each bind and step checks one flag.

use std::cell::{Cell, RefCell};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::engine::statement::observer::{self, Observer};
use crate::error::SResult;

/// One statement execution.
#[derive(Clone, Debug)]
pub struct Step {
    sql: String,
    values: Vec<(usize, Value)>,
    /// `sqlite3_step` calls made (rows read, plus the one that found the end).
    steps: u32,
}

#[derive(Default)]
struct Recorder {
    steps: Vec<Step>,
    /// Values bound to each statement (by handle) since its bindings were cleared.
    bound: HashMap<usize, Vec<(usize, Value)>>,
    /// The execution each statement is in (by handle), while it is.
    running: HashMap<usize, usize>,
}

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::default());
    static LAST: RefCell<Vec<Step>> = const { RefCell::new(Vec::new()) };
}

fn recording() -> bool {
    ON.with(Cell::get)
}

/// What the statements are observed by while recording.
struct Recording;

impl Observer for Recording {
    fn bound(&self, stmt: usize, index: usize, value: ValueRef<'_>) {
        on_bind(stmt, index, value);
    }
    fn cleared(&self, stmt: usize) {
        on_clear(stmt);
    }
    fn stepping(&self, stmt: usize, fresh: bool, sql: &dyn Fn() -> String) {
        on_step(stmt, fresh, sql);
    }
}

/// Starts recording (dropping anything recorded before).
pub fn start() {
    RECORDER.with(|r| *r.borrow_mut() = Recorder::default());
    ON.with(|on| on.set(true));
    observer::observe(Some(&Recording));
}

/// Stops recording and keeps what was recorded for [`replay_last`]; returns how many
/// executions it holds.
pub fn stop() -> usize {
    ON.with(|on| on.set(false));
    observer::observe(None);
    let steps = RECORDER.with(|r| std::mem::take(&mut r.borrow_mut().steps));
    let n = steps.len();
    LAST.with(|last| *last.borrow_mut() = steps);
    n
}

/// A value was bound to parameter `index` of statement `stmt` (a handle's address).
fn on_bind(stmt: usize, index: usize, value: ValueRef<'_>) {
    if recording() {
        RECORDER.with(|r| {
            r.borrow_mut()
                .bound
                .entry(stmt)
                .or_default()
                .push((index, owned(value)))
        });
    }
}

fn owned(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::Integer(n),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// The statement's bindings were cleared.
fn on_clear(stmt: usize) {
    if recording() {
        RECORDER.with(|r| r.borrow_mut().bound.remove(&stmt));
    }
}

/// The statement is about to be stepped; `fresh` when this starts an execution.
fn on_step(stmt: usize, fresh: bool, sql: impl FnOnce() -> String) {
    if !recording() {
        return;
    }
    RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        match r.running.get(&stmt) {
            Some(&at) if !fresh => r.steps[at].steps += 1,
            _ => {
                let values = r.bound.get(&stmt).cloned().unwrap_or_default();
                let at = r.steps.len();
                r.steps.push(Step {
                    sql: sql(),
                    values,
                    steps: 1,
                });
                r.running.insert(stmt, at);
            }
        }
    });
}

/// Runs the last recording on `conn` and returns the time it took.
pub fn replay_last(conn: &Connection) -> SResult<Duration> {
    let steps = LAST.with(|last| last.borrow().clone());
    replay(conn, &steps)
}

/// Runs `steps` on `conn`: each statement prepared once (kept for the replay), its values
/// bound, stepped as often as it was, every column of every row read.
pub fn replay(conn: &Connection, steps: &[Step]) -> SResult<Duration> {
    let mut prepared: HashMap<&str, rusqlite::Statement<'_>> = HashMap::new();
    let started = Instant::now();
    for step in steps {
        let stmt = match prepared.entry(step.sql.as_str()) {
            Entry::Occupied(kept) => kept.into_mut(),
            Entry::Vacant(new) => new.insert(conn.prepare(&step.sql)?),
        };
        for (index, value) in &step.values {
            stmt.raw_bind_parameter(*index, value)?;
        }
        let mut rows = stmt.raw_query();
        for _ in 0..step.steps {
            let Some(row) = rows.next()? else { break };
            for i in 0..row.as_ref().column_count() {
                std::hint::black_box(row.get_ref(i)?);
            }
        }
    }
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded insert and read replay to the same rows on a second database.
    #[test]
    fn replays_what_was_recorded() {
        let steps = vec![
            Step {
                sql: "CREATE TABLE t(a, b)".into(),
                values: vec![],
                steps: 1,
            },
            Step {
                sql: "INSERT INTO t VALUES (?, ?)".into(),
                values: vec![(1, Value::Integer(1)), (2, Value::Text("x".into()))],
                steps: 1,
            },
            Step {
                sql: "SELECT * FROM t".into(),
                values: vec![],
                steps: 2,
            },
        ];
        let conn = Connection::open_in_memory().unwrap();
        replay(&conn, &steps).unwrap();
        let b: String = conn.query_row("SELECT b FROM t WHERE a = 1", [], |r| r.get(0)).unwrap();
        assert_eq!(b, "x");
    }

    #[test]
    fn records_only_while_on() {
        on_step(3, true, || "BEGIN".into());
        start();
        on_bind(7, 1, ValueRef::Integer(5));
        on_step(7, true, || "SELECT ?".into());
        on_step(7, false, || unreachable!());
        on_step(3, true, || "COMMIT".into());
        assert_eq!(stop(), 2);
        on_step(3, true, || "BEGIN".into());
        let last = LAST.with(|l| l.borrow().clone());
        assert_eq!(last[0].sql, "SELECT ?");
        assert_eq!(last[0].steps, 2);
        assert_eq!(last[0].values, vec![(1, Value::Integer(5))]);
        assert_eq!(last[1].sql, "COMMIT");
    }
}
