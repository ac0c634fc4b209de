//! Sweeps and statistics. getQueueDepths, getHubStats and getAuditStats each run as one
//! statement here (one read transaction), taking their counts from the large-log counters
//! once the log is large (`scale`); the rest are the original's statements, run by the
//! JS layer.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::scale;
use super::stmt::{Effect, Stmt};
use crate::engine::connection::with_handle;

pub(super) const STATEMENTS: &[Stmt] = &[
    // The original's plan read these ids through idx_messages_status(status), i.e. in
    // rowid order, and wrote the dead letters in that order (which getDeadLetters shows
    // for equal failed_at_ms); idx_messages_status_time yields them by created_at_ms, so
    // the order is stated.
    Stmt::new(
        "findExpired",
        "SELECT id FROM messages WHERE status='queued' AND expires_at_ms < ? ORDER BY rowid",
    )
    .effect(Effect::TickRead),
    // The original's counts, prepared at open as it did (a file lacking what they read
    // fails in createStore); the three statistics below count in one statement each.
    Stmt::new(
        "urgentDepth",
        "SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority >= 7",
    ),
    Stmt::new(
        "normalDepth",
        "SELECT COUNT(*) as cnt FROM messages WHERE status='queued' AND priority < 7",
    ),
    Stmt::new(
        "onlineCount",
        "SELECT COUNT(*) as cnt FROM agents WHERE status='online'",
    ),
    Stmt::new("msgCount", "SELECT COUNT(*) as cnt FROM messages"),
    Stmt::new("dlqDepth", "SELECT COUNT(*) as cnt FROM dead_letters"),
    Stmt::new(
        "ackedRecent",
        "SELECT COUNT(*) as cnt FROM messages WHERE status='acked' AND created_at_ms > ? - 300000",
    )
    .effect(Effect::TickRead),
    Stmt::new(
        "assignCountByStatus",
        "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = ?",
    ),
    Stmt::new(
        "activeAssignCount",
        "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status IN ('queued','running')",
    ),
];

// Each stats method is one statement (one read transaction). On a large log
// (src/store/scale.rs) every count the original takes over messages, dead_letters and
// assign_jobs comes from the counters (src/store/counters.sql): its COUNT(*)s walk a
// whole index, or every queued message, or every job of a status. Only online_agents is
// counted (the agents table stays small, through idx_agents_status). The first column is
// scale::FRESH (checked by scale::stats_row); the _SMALL twins, run while the log is
// small, are the original's statements with a 0 there.
const QUEUE_DEPTHS: &str = concat!(
    "SELECT ",
    scale::counters_fresh!(),
    ", c.urgent, c.normal, c.dead_letters FROM temp.store_counts AS c"
);
const HUB_STATS: &str = concat!(
    "SELECT ",
    scale::counters_fresh!(),
    ", (SELECT COUNT(*) FROM agents WHERE status='online'), c.messages, c.assign_queued + c.assign_running,
 c.urgent, c.normal, c.dead_letters FROM temp.store_counts AS c"
);
const AUDIT_STATS: &str = concat!(
    "SELECT ",
    scale::counters_fresh!(),
    ", (SELECT COUNT(*) FROM agents WHERE status='online'), c.messages, c.dead_letters,
 c.assign_queued, c.assign_running, c.assign_failed, c.assign_timed_out FROM temp.store_counts AS c"
);

const QUEUE_DEPTHS_SMALL: &str = "SELECT 0,
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT COUNT(*) FROM dead_letters)";
const HUB_STATS_SMALL: &str = "SELECT 0,
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT COUNT(*) FROM messages),
 (SELECT COUNT(*) FROM assign_jobs WHERE status IN ('queued','running')),
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT COUNT(*) FROM dead_letters)";
const AUDIT_STATS_SMALL: &str = "SELECT 0,
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM dead_letters),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'queued'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'running'),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'failed'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'timed_out')";

/// getQueueDepths on connection `db`, as JSON.
#[napi]
pub fn store_queue_depths(env: Env, db: u32) -> Result<String> {
    with_handle(&env, db, |core| {
        let v = scale::stats(core, QUEUE_DEPTHS, QUEUE_DEPTHS_SMALL)?;
        scale::after_tick_read(core);
        Ok(format!("{{\"urgent\":{},\"normal\":{},\"dlq\":{}}}", v[0], v[1], v[2]))
    })
}

/// getHubStats on connection `db`, as JSON.
#[napi]
pub fn store_hub_stats(env: Env, db: u32) -> Result<String> {
    with_handle(&env, db, |core| {
        let v = scale::stats(core, HUB_STATS, HUB_STATS_SMALL)?;
        scale::after_tick_read(core);
        Ok(format!(
            "{{\"online_agents\":{},\"total_messages\":{},\"active_assign_jobs\":{},\"urgent\":{},\"normal\":{},\"dlq\":{}}}",
            v[0], v[1], v[2], v[3], v[4], v[5]
        ))
    })
}

/// getAuditStats on connection `db`, as JSON.
#[napi]
pub fn store_audit_stats(env: Env, db: u32) -> Result<String> {
    with_handle(&env, db, |core| {
        let v = scale::stats(core, AUDIT_STATS, AUDIT_STATS_SMALL)?;
        scale::after_tick_read(core);
        Ok(format!(
            "{{\"online_agents\":{},\"total_messages\":{},\"dlq\":{},\"assign_queued\":{},\"assign_running\":{},\"assign_failed\":{},\"assign_timed_out\":{}}}",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6]
        ))
    })
}
