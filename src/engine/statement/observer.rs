//! Who watches statements run, in builds with the `bench-floor` feature only (part of
//! `statement`): while an observer is set on this thread, it is told of every value bound,
//! every clearing of the bindings and every step, by the statement's identity.

use std::cell::Cell;

use rusqlite::types::ValueRef;

use crate::ffi::sqlite::RawStmt;

/// What an observer is told; `stmt` is the statement's identity while it lives.
pub trait Observer {
    fn bound(&self, stmt: usize, index: usize, value: ValueRef<'_>);
    fn cleared(&self, stmt: usize);
    /// About to step; `fresh` when this starts an execution, `sql` its text.
    fn stepping(&self, stmt: usize, fresh: bool, sql: &dyn Fn() -> String);
}

thread_local! {
    static OBSERVER: Cell<Option<&'static dyn Observer>> = const { Cell::new(None) };
}

/// Sets (or clears) this thread's observer.
pub fn observe(observer: Option<&'static dyn Observer>) {
    OBSERVER.with(|o| o.set(observer));
}

pub(super) fn bound(stmt: &RawStmt, index: usize, value: ValueRef<'_>) {
    if let Some(o) = OBSERVER.with(Cell::get) {
        o.bound(stmt.id(), index, value);
    }
}

pub(super) fn cleared(stmt: &RawStmt) {
    if let Some(o) = OBSERVER.with(Cell::get) {
        o.cleared(stmt.id());
    }
}

pub(super) fn stepping(stmt: &RawStmt) {
    if let Some(o) = OBSERVER.with(Cell::get) {
        o.stepping(stmt.id(), !stmt.is_busy(), &|| stmt.sql().into_owned());
    }
}
