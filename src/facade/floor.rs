//! The benchmarks' floor (`sqlite::floor`) as bench/run.mjs drives it: record the
//! statements a series of calls runs, then replay them from Rust on another connection.
//! Internal to the benchmarks; not part of the package's API.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::native_db::with_handle;
use crate::sqlite::floor;

/// Starts recording (`on`) or stops and keeps the recording; returns the number of
/// statement executions kept (0 when starting).
#[napi]
pub fn bench_floor_record(on: bool) -> u32 {
    if on {
        floor::start();
        0
    } else {
        u32::try_from(floor::stop()).unwrap_or(u32::MAX)
    }
}

/// Replays the kept recording on connection `db`; the nanoseconds it took.
#[napi]
pub fn bench_floor_replay(env: Env, db: u32) -> Result<f64> {
    with_handle(&env, db, |core| Ok(floor::replay_last(&core.conn)?.as_nanos() as f64))
}
