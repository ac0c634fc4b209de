//! Agents: registration with lease, heartbeat, topics, status and the stale sweep.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::js::bind::{bound_from_js, Arg, Bound};
use crate::js::json_out::{JsonOut, AGENT, RAW};
use crate::js::throw::Throw;
use crate::js::value::{js_input, JsVal};
use crate::native_db::NativeDb;
use crate::store::now;
use crate::store::queries::{self as exec, read_row};

/// The statements prepared at open, so that a file whose schema lacks what they use
/// fails in createStore, as the original's eager `prepare` did.
pub(super) const STATEMENTS: &[&str] = &[HEARTBEAT, HEARTBEAT_ONLINE, UPSERT_AGENT, GET_AGENT, AGENTS_BY_TOPIC];

const UPSERT_AGENT: &str = "INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, status, metadata_json)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
 ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
 topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
 status=excluded.status, metadata_json=excluded.metadata_json";
pub const GET_AGENT: &str = "SELECT * FROM agents WHERE agent_id = ?";
pub const AGENTS_BY_TOPIC: &str =
    "SELECT a.* FROM agents a, json_each(a.topics_json) t WHERE t.value=? AND a.status != 'offline'";
const HEARTBEAT: &str = "UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=?";
/// The heartbeat of an agent that is already online: the same row change without
/// rewriting `status`, which would also rewrite its index entry (~25% more WAL bytes).
const HEARTBEAT_ONLINE: &str =
    "UPDATE agents SET last_seen_ms=?, lease_expires_ms=? WHERE agent_id=? AND status='online'";

js_input!(
    /// registerAgent's fields: the JSON already stringified, the lease computed by the glue.
    RegisterAgentInput { agent_id, cli, pid, lease, capabilities_json, topics_json, metadata_json }
);

#[napi]
impl NativeDb {
    /// registerAgent: upsert, then read back. The glue computes `now + heartbeat_ttl_ms`
    /// with JS's own `+` (before its JSON.stringify calls, in the original's order) and
    /// patches the caller's `agent_id` and that lease into the result.
    #[napi]
    pub fn register_agent(&self, env: Env, input: JsVal, now: f64) -> Result<String> {
        let RegisterAgentInput {
            agent_id,
            cli,
            pid,
            lease,
            capabilities_json,
            topics_json,
            metadata_json,
        } = RegisterAgentInput::read(&input).map_err(|e| e.throw(env.raw()))?;
        let db_path = self.db_path();
        self.with_atomic(&env, |conn| {
            let lease_id = crate::store::uuid7::next();
            let id = bound_from_js(&agent_id)?;
            let params = [
                id.clone(),
                bound_from_js(&cli)?,
                if pid.is_nullish() {
                    Bound::Null
                } else {
                    bound_from_js(&pid)?
                },
                bound_from_js(&capabilities_json)?,
                bound_from_js(&topics_json)?,
                Bound::num(now),
                bound_from_js(&lease)?,
                Bound::text("online"),
                bound_from_js(&metadata_json)?,
            ];
            let changes = exec::run(conn, UPSERT_AGENT, &params)?;

            let persisted = read_row(conn, GET_AGENT, &[Arg::Val(&id)], &RAW)?;

            let mut out = JsonOut::new();
            // agent_id and lease_expires_ms are the caller's own values, set by the glue.
            out.raw("{\"agent_id\":null,\"lease_id\":");
            out.str(&lease_id);
            out.raw(",\"lease_expires_ms\":null,\"server_time_ms\":");
            out.num(now);
            out.raw(",\"effective\":{\"updated\":");
            out.bool(changes > 0);
            match persisted {
                Some(row) => {
                    // persisted?.status === "online" && Number(persisted.lease_expires_ms) === leaseExpires
                    let (status, lease_col) = (row.get("status"), row.get("lease_expires_ms"));
                    let online =
                        status.is_str("online") && lease.number().is_some_and(|n| lease_col.number().ok() == Some(n));
                    out.raw(",\"online\":");
                    out.bool(online);
                    out.raw(",\"status\":");
                    status.write_json(&mut out);
                    out.raw(",\"last_seen_ms\":");
                    row.get("last_seen_ms").write_json(&mut out);
                    out.raw(",\"lease_expires_ms\":");
                    lease_col.write_json(&mut out);
                }
                None => out.raw(",\"online\":false,\"status\":null,\"last_seen_ms\":null,\"lease_expires_ms\":null"),
            }
            out.raw(",\"store_type\":\"sqlite\",\"db_path\":");
            out.str(db_path);
            out.raw("}}");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn get_agent(&self, env: Env, id: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::row_text(&core.conn, GET_AGENT, &[Arg::Js(id)], &AGENT)
        })
    }

    /// refreshLease: revives offline agents too. The glue computes the lease with JS's
    /// `+` and patches `agent_id` and `lease_expires_ms` into the result.
    #[napi]
    pub fn refresh_lease(&self, env: Env, agent_id: JsVal, now: f64, lease: JsVal) -> Result<String> {
        let db_path = self.db_path();
        self.with(&env, |core| {
            let now_b = Bound::num(now);
            let lease_b = bound_from_js(&lease)?;
            let args = [Arg::Val(&now_b), Arg::Val(&lease_b), Arg::Js(agent_id)];
            // Same end state and change count as the single original UPDATE: an online
            // agent is refreshed in place, any other (stale, offline) is revived.
            let mut changes = exec::run_args(&core.conn, HEARTBEAT_ONLINE, &args)?;
            if changes == 0 {
                changes = exec::run_args(&core.conn, HEARTBEAT, &args)?;
            }
            let mut out = JsonOut::new();
            out.raw("{\"agent_id\":null,\"lease_expires_ms\":null,\"server_time_ms\":");
            out.num(now);
            out.raw(",\"effective\":{\"updated\":");
            out.bool(changes > 0);
            out.raw(",\"store_type\":\"sqlite\",\"db_path\":");
            out.str(db_path);
            out.raw("}}");
            Ok(out.finish())
        })
    }

    #[napi]
    pub fn update_agent_topics(&self, env: Env, agent_id: JsVal, topics_json: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            let now_b = Bound::num(now() as f64);
            let n = exec::run_args(
                &core.conn,
                "UPDATE agents SET topics_json=?, last_seen_ms=? WHERE agent_id=?",
                &[Arg::Js(topics_json), Arg::Val(&now_b), Arg::Js(agent_id)],
            )?;
            Ok(n > 0)
        })
    }

    #[napi]
    pub fn list_online_agents(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(
                &core.conn,
                "SELECT * FROM agents WHERE status != 'offline'",
                &[],
                &AGENT,
            )
        })
    }

    #[napi]
    pub fn list_all_agents(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(&core.conn, "SELECT * FROM agents", &[], &AGENT)
        })
    }

    #[napi]
    pub fn get_agents_by_topic(&self, env: Env, topic: JsVal) -> Result<String> {
        self.with(&env, |core| {
            exec::rows_text(&core.conn, AGENTS_BY_TOPIC, &[Arg::Js(topic)], &AGENT)
        })
    }

    /// Two separate UPDATEs, so one sweep can take an agent from online to offline.
    #[napi]
    pub fn sweep_stale_agents(&self, env: Env) -> Result<String> {
        self.with(&env, |core| {
            let now_b = Bound::num(now() as f64);
            let stale = exec::run(
                &core.conn,
                "UPDATE agents SET status='stale' WHERE status='online' AND lease_expires_ms < ?",
                std::slice::from_ref(&now_b),
            )?;
            let offline = exec::run(
                &core.conn,
                "UPDATE agents SET status='offline' WHERE status='stale' AND lease_expires_ms < ? - 300000",
                std::slice::from_ref(&now_b),
            )?;
            Ok(format!("{{\"stale\":{stale},\"offline\":{offline}}}"))
        })
    }

    #[napi]
    pub fn update_agent_status(&self, env: Env, agent_id: JsVal, status: JsVal) -> Result<bool> {
        self.with(&env, |core| {
            let n = exec::run_args(
                &core.conn,
                "UPDATE agents SET status=? WHERE agent_id=?",
                &[Arg::Js(status), Arg::Js(agent_id)],
            )?;
            Ok(n > 0)
        })
    }
}
