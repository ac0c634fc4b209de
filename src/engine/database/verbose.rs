//! The `verbose` option: better-sqlite3 calls its function with each statement's SQL
//! (bound values written in) right before running it, while the connection is busy.
//! A logger that throws stops the statement; its exception is the one JS sees.

use crate::engine::connection::Core;
use crate::engine::js::protocol::slot;
use crate::engine::js::result_slots as slots;
use crate::error::SResult;
use crate::ffi::napi::Napi;
use crate::ffi::sqlite::RawStmt;

/// Logs a bound statement about to run (a no-op without a logger).
#[inline]
pub(super) fn log_stmt(js: Napi, core: &Core, stmt: &RawStmt) -> SResult<()> {
    if core.settings.logger.get().is_none() {
        return Ok(());
    }
    log_text(js, core, &stmt.expanded_sql())
}

/// Logs SQL the facade runs on its own (a transaction's BEGIN, COMMIT, ...). The BUSY
/// result slot names this connection while the logger runs.
#[cold]
pub(super) fn log_text(js: Napi, core: &Core, sql: &[u8]) -> SResult<()> {
    let Some(logger) = core.settings.logger.get() else {
        return Ok(());
    };
    let outer = slots::get(slot::BUSY);
    slots::set(js, slot::BUSY, f64::from(logger.handle) + 1.0)?;
    let called = (|| {
        let f = logger.function.local(js)?;
        let arg = js.string_utf8(sql)?;
        js.call_function(js.undefined()?, f, &[arg])
    })();
    slots::set(js, slot::BUSY, outer)?;
    // A logger that throws leaves its exception pending: the statement stops with it.
    called.map(|_| ())
}
