//! One prepared statement as the engine runs it: a step is `sqlite3_step` inside the
//! stages every step passes, each from its feature's home:
//!
//! 1. the callbacks' frame (`callbacks::frames`): the user callbacks the step runs share
//!    one frame, and aggregate calls queued in it are delivered before it returns;
//! 2. the checkpointer's stage (`checkpointer::steps`): a write passes the restart gate
//!    of a connection that has one, the WAL PRAGMAs keep their meaning;
//! 3. with the `bench-floor` feature only, the statement observer (`observer`).

use std::ffi::c_int;
use std::ops::Deref;

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::engine::callbacks::frames::StepFrame;
use crate::engine::checkpointer::steps::{self, StepKind};
use crate::error::SResult;
use crate::ffi::napi::Utf8;
use crate::ffi::sqlite::RawStmt;

#[cfg(feature = "bench-floor")]
pub mod observer;

/// Text of at least this many bytes is bound in place ([`Statement::bind_text`]): below
/// it, SQLite's copy costs less than keeping the text.
const KEPT_TEXT_MIN: usize = 256;

/// A prepared statement; what it reads (columns, parameters, its SQL) is its
/// [`RawStmt`]'s. Finalized on drop, which must come before its connection closes.
pub struct Statement {
    raw: RawStmt,
    /// What the checkpointer does around its steps, told by its text.
    kind: StepKind,
    /// The last step failed only in delivering queued callback calls (its error is
    /// pending in JS): the next reset reports the failure too, as SQLite's would.
    delivery_failed: bool,
    /// Whether a parameter has a name (`?NNN` included), which positional values skip.
    named_parameters: bool,
}

/// The outcome of preparing the first statement of a text.
pub struct Prepared {
    /// None when the text holds only whitespace or comments.
    pub stmt: Option<Statement>,
    /// Byte offset of what follows the statement.
    pub tail: usize,
}

impl Deref for Statement {
    type Target = RawStmt;

    fn deref(&self) -> &RawStmt {
        &self.raw
    }
}

impl Statement {
    /// Prepares the first statement of `sql` (which need not be NUL-terminated).
    /// `persistent` hints SQLite that the statement is kept (SQLITE_PREPARE_PERSISTENT).
    pub fn prepare(conn: &Connection, sql: &[u8], persistent: bool) -> SResult<Prepared> {
        let prepared = steps::prepare(conn, sql, || RawStmt::prepare(conn, sql, persistent))?;
        let tail = prepared.tail;
        let stmt = prepared.stmt.map(|raw| Statement {
            named_parameters: (1..=raw.parameter_count()).any(|i| raw.parameter_name(i).is_some()),
            raw,
            kind: StepKind::of(&sql[..tail]),
            delivery_failed: false,
        });
        Ok(Prepared { stmt, tail })
    }

    /// Whether a parameter has a name (`?NNN` included): positional values then do not
    /// simply bind in order.
    pub fn has_named_parameters(&self) -> bool {
        self.named_parameters
    }

    /// One step: SQLITE_ROW, SQLITE_DONE or an error code.
    pub fn step(&mut self) -> c_int {
        #[cfg(feature = "bench-floor")]
        observer::stepping(&self.raw);
        // The callbacks this step runs share one frame (and its handle scope).
        let frame = StepFrame::enter(|| self.raw.readonly());
        let status = steps::step(&mut self.raw, self.kind);
        if frame.finish() {
            return status;
        }
        // A queued call failed: the step fails as if it had failed in place, and the
        // statement is reset as after any failed step (a ROW it produced is dropped).
        self.delivery_failed = true;
        self.raw.reset();
        ffi::SQLITE_ERROR
    }

    /// `sqlite3_reset`: the error of the last step, if any.
    pub fn reset(&mut self) -> c_int {
        let status = self.raw.reset();
        if std::mem::take(&mut self.delivery_failed) {
            return ffi::SQLITE_ERROR;
        }
        status
    }

    /// Binds one value (1-based index); returns SQLite's status.
    pub fn bind(&mut self, index: usize, value: ValueRef<'_>) -> c_int {
        #[cfg(feature = "bench-floor")]
        observer::bound(&self.raw, index, value);
        self.raw.bind(index, value)
    }

    /// Binds TEXT read from JS (1-based index): a long one is kept by the statement and
    /// read in place by SQLite, a short one copied by SQLite. Returns SQLite's status.
    pub fn bind_text(&mut self, index: usize, text: Utf8) -> c_int {
        #[cfg(feature = "bench-floor")]
        observer::bound(&self.raw, index, ValueRef::Text(&text));
        if text.len() < KEPT_TEXT_MIN {
            return self.raw.bind(index, ValueRef::Text(&text));
        }
        let mut bytes = text.into_vec();
        // The read set room aside for three bytes a UTF-16 unit: kept bound, the room
        // would outlive the call (a shrink in place, no copy).
        if bytes.capacity() > bytes.len() + bytes.len() / 2 {
            bytes.shrink_to_fit();
        }
        self.raw.bind_text_kept(index, bytes)
    }

    pub fn clear_bindings(&mut self) {
        #[cfg(feature = "bench-floor")]
        observer::cleared(&self.raw);
        self.raw.clear_bindings();
    }
}
