//! Sweeps and statistics.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::js::bind::Bound;
use crate::js::model::Val;
use crate::native_db::NativeDb;
use crate::sqlite::transaction::{in_transaction, Behavior};
use crate::store::now;
use crate::store::queries as exec;
use crate::store::scale;

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did. (The original's; the
/// methods below run them combined into one statement per call.)
pub(super) const STATEMENTS: &[&str] = &[ASSIGN_BY_STATUS, DLQ_DEPTH, ONLINE_AGENTS, TOTAL_MESSAGES];

const ONLINE_AGENTS: &str = "SELECT COUNT(*) as cnt FROM agents WHERE status='online'";
const TOTAL_MESSAGES: &str = "SELECT COUNT(*) as cnt FROM messages";
const DLQ_DEPTH: &str = "SELECT COUNT(*) as cnt FROM dead_letters";
const ASSIGN_BY_STATUS: &str = "SELECT COUNT(*) as cnt FROM assign_jobs WHERE status = ?";

// Each stats method is one statement (one read transaction) of the original's COUNT(*)
// queries. On a large log (src/store/scale.rs) the row counts of messages and dead_letters
// come from the counters instead: the original's `SELECT COUNT(*) … FROM messages` and
// `… FROM dead_letters` walk a whole index, O(n). The first two columns are
// scale::VERSIONS (checked by scale::stats_row); the _SMALL twins, run while the log is
// small, count as the original did and have zeros there.
const QUEUE_DEPTHS: &str = "SELECT (SELECT data_version FROM pragma_data_version()), (SELECT schema_version FROM pragma_schema_version()),
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT n FROM temp.store_counts WHERE name = 'dead_letters')";
const HUB_STATS: &str = "SELECT (SELECT data_version FROM pragma_data_version()), (SELECT schema_version FROM pragma_schema_version()),
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT n FROM temp.store_counts WHERE name = 'messages'),
 (SELECT COUNT(*) FROM assign_jobs WHERE status IN ('queued','running')),
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT n FROM temp.store_counts WHERE name = 'dead_letters')";
const AUDIT_STATS: &str = "SELECT (SELECT data_version FROM pragma_data_version()), (SELECT schema_version FROM pragma_schema_version()),
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT n FROM temp.store_counts WHERE name = 'messages'), (SELECT n FROM temp.store_counts WHERE name = 'dead_letters'),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'queued'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'running'),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'failed'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'timed_out')";

const QUEUE_DEPTHS_SMALL: &str = "SELECT 0, 0,
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT COUNT(*) FROM dead_letters)";
const HUB_STATS_SMALL: &str = "SELECT 0, 0,
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT COUNT(*) FROM messages),
 (SELECT COUNT(*) FROM assign_jobs WHERE status IN ('queued','running')),
 (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority >= 7), (SELECT COUNT(*) FROM messages WHERE status='queued' AND priority < 7), (SELECT COUNT(*) FROM dead_letters)";
const AUDIT_STATS_SMALL: &str = "SELECT 0, 0,
 (SELECT COUNT(*) FROM agents WHERE status='online'), (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM dead_letters),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'queued'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'running'),
 (SELECT COUNT(*) FROM assign_jobs WHERE status = 'failed'), (SELECT COUNT(*) FROM assign_jobs WHERE status = 'timed_out')";

const EXPIRED_QUEUED: &str = "SELECT id FROM messages WHERE status='queued' AND expires_at_ms < ? ORDER BY rowid";

#[napi]
impl NativeDb {
    /// sweepExpired: dead-letter every queued message past its expiry and time out
    /// overdue human requests, in one transaction. The original used a DEFERRED one,
    /// which reads before it writes and so can fail with SQLITE_BUSY_SNAPSHOT when
    /// another process writes in between; IMMEDIATE takes the write lock up front
    /// (waiting under busy_timeout) and gives the same result.
    #[napi]
    pub fn sweep_expired(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            let conn = &core.conn;
            let now = now();
            let now_b = Bound::num(now as f64);
            let out = in_transaction(conn, Behavior::Immediate, || {
                let ids: Vec<Bound> = {
                    // The original's plan read these ids through idx_messages_status(status),
                    // i.e. in rowid order, and wrote the dead letters in that order (which
                    // getDeadLetters shows for equal failed_at_ms); idx_messages_status_time
                    // yields them by created_at_ms, so the order is restated.
                    let mut stmt = exec::prepare(conn, EXPIRED_QUEUED)?;
                    crate::js::bind::bind_all(&mut stmt, std::slice::from_ref(&now_b))?;
                    let mut rows = stmt.raw_query();
                    let mut ids = Vec::new();
                    // The original looped over the ids in JS and bound them again.
                    while let Some(row) = rows.next()? {
                        // Rebound as JS hands the value back: numbers as REAL, text as decoded.
                        ids.push(Val::from_column(row.get_ref(0)?).bound()?);
                    }
                    ids
                };
                for id in &ids {
                    exec::run(conn, "UPDATE messages SET status=? WHERE id=?", &[Bound::text("dead_letter"), id.clone()])?;
                    exec::run(
                        conn,
                        "INSERT OR REPLACE INTO dead_letters (message_id, reason, failed_at_ms, last_error) VALUES (?,?,?,?)",
                        &[id.clone(), Bound::text("ttl_expired"), now_b.clone(), Bound::Null],
                    )?;
                }
                let human = crate::store::human::expire_human_requests(conn, now)?;
                Ok(format!("{{\"messages\":{},\"human_requests\":{human}}}", ids.len()))
            })?;
            // The periodic sweep is where a log that has grown large gets its indexes.
            scale::grow_if_large(core)?;
            Ok(out)
        })
    }

    #[napi]
    pub fn get_queue_depths(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            scale::tick_read(core, || {
                let v = scale::stats(core, QUEUE_DEPTHS, QUEUE_DEPTHS_SMALL)?;
                Ok(format!("{{\"urgent\":{},\"normal\":{},\"dlq\":{}}}", v[0], v[1], v[2]))
            })
        })
    }

    #[napi]
    pub fn get_delivery_stats(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            scale::tick_read(core, || {
                let n = exec::count(
                    &core.conn,
                    "SELECT COUNT(*) as cnt FROM messages WHERE status='acked' AND created_at_ms > ? - 300000",
                    &[Bound::num(now() as f64)],
                )?;
                Ok(format!("{{\"total_deliveries\":{n},\"avg_delivery_ms\":0}}"))
            })
        })
    }

    #[napi]
    pub fn get_hub_stats(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            scale::tick_read(core, || {
                let v = scale::stats(core, HUB_STATS, HUB_STATS_SMALL)?;
                Ok(format!(
                    "{{\"online_agents\":{},\"total_messages\":{},\"active_assign_jobs\":{},\"urgent\":{},\"normal\":{},\"dlq\":{}}}",
                    v[0], v[1], v[2], v[3], v[4], v[5]
                ))
            })
        })
    }

    #[napi]
    pub fn get_audit_stats(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            scale::tick_read(core, || {
                let v = scale::stats(core, AUDIT_STATS, AUDIT_STATS_SMALL)?;
                Ok(format!(
                    "{{\"online_agents\":{},\"total_messages\":{},\"dlq\":{},\"assign_queued\":{},\"assign_running\":{},\"assign_failed\":{},\"assign_timed_out\":{}}}",
                    v[0], v[1], v[2], v[3], v[4], v[5], v[6]
                ))
            })
        })
    }
}
