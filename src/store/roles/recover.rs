//! recoverRoleRegistry: after a restart, expired holders are released, live ones must
//! probe again and orphaned activations are fenced; then the registry, its candidates and
//! pending role messages are returned in one document.

use rusqlite::Connection;

use crate::js::bind::Arg;
use crate::js::json_out::{JsonOut, CANDIDATE, MESSAGE, RAW};
use crate::js::model::Val;
use crate::js::v8::{Compare, V8};
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;
use crate::store::queries::read_rows;

use super::{bind_run, LIST_CANDIDATES, LIST_ROLES, PENDING_MESSAGES, RECOVER_EXPIRED, RECOVER_LIVE, RECOVER_ORPHANED};

pub(super) fn recover(v8: &V8, conn: &Connection, now_ms: &JsVal) -> SResult<String> {
    let now = Val::from_js(*now_ms)?;
    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, None)?;
    for role in &roles {
        let wire = role.get("role_key_wire");
        let holder = role.get("holder_agent_id");
        let guard = [wire, role.get("version"), role.get("epoch")];
        if holder.truthy() {
            let lease = role.get("holder_lease_expires_ms");
            if lease.nullish() || lease.compare(Compare::Le, &now, v8)? {
                let mut values = vec![now.clone()];
                values.extend(guard);
                bind_run(conn, RECOVER_EXPIRED, &values)?;
            } else {
                let mut values = vec![Val::text(&crate::store::uuid7::next()), now.clone()];
                values.extend(guard);
                bind_run(conn, RECOVER_LIVE, &values)?;
            }
        } else if role.get("activation_id").truthy() || role.get("state").strict_eq(&Val::text("elected-probing"))? {
            let mut values = vec![now.clone()];
            values.extend(guard);
            bind_run(conn, RECOVER_ORPHANED, &values)?;
        }
    }

    let roles = read_rows(conn, LIST_ROLES, &[], &RAW, None)?;
    let mut d = JsonOut::new();
    d.raw("{\"roles\":[");
    for (i, r) in roles.iter().enumerate() {
        if i > 0 {
            d.raw(",");
        }
        d.piece(&r.json());
    }
    d.raw("],\"candidates\":[");
    let mut first = true;
    for r in &roles {
        let wire = r.get("role_key_wire").bound()?;
        for c in read_rows(conn, LIST_CANDIDATES, &[Arg::Val(&wire)], &CANDIDATE, None)? {
            if !first {
                d.raw(",");
            }
            first = false;
            d.piece(&c.json());
        }
    }
    d.raw("],\"pending_messages\":[");
    let mut first = true;
    for r in &roles {
        let wire = r.get("role_key_wire").bound()?;
        for m in read_rows(
            conn,
            PENDING_MESSAGES,
            &[Arg::Val(&wire), Arg::Js(*now_ms)],
            &MESSAGE,
            None,
        )? {
            if !first {
                d.raw(",");
            }
            first = false;
            d.piece(&m.json());
        }
    }
    d.raw("]}");
    Ok(d.finish())
}
