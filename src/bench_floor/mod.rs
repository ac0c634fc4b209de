//! The benchmarks' floor as bench/run.mjs drives it: record the
//! statements a series of calls runs, then replay them from Rust on another connection.
//! Internal to the benchmarks; not part of the package's API.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::connection::with_handle;
pub mod recorder;

/// Starts recording (`on`) or stops and keeps the recording; returns the number of
/// statement executions kept (0 when starting).
#[napi]
pub fn bench_floor_record(on: bool) -> u32 {
    if on {
        recorder::start();
        0
    } else {
        u32::try_from(recorder::stop()).unwrap_or(u32::MAX)
    }
}

/// Replays the kept recording on connection `db`; the nanoseconds it took.
#[napi]
pub fn bench_floor_replay(env: Env, db: u32) -> Result<f64> {
    with_handle(
        &env,
        db,
        |core| Ok(recorder::replay_last(&core.conn)?.as_nanos() as f64),
    )
}
