// `triflux-store roles <db>`: the role registry with decoded role keys, holder, state,
// epoch, version, lease left, and holders whose lease has expired flagged, as are
// "phantom" roles: `active` without a holder (a schema 8 store refuses new ones and its
// recoverRoleRegistry resets these; a schema 6 or 7 store leaves them).

import { openHub, requireTables, sqlite } from '../open.mjs';
import { intOption, leaseLeft, printListing } from '../util.mjs';

/**
 * Decodes an `rk2.` wire (`rk2.` + unpadded base64url of the key's JSON) to
 * { project_id, role_kind, scope_id }, or null when it does not decode.
 */
export function decodeRoleKey(wire) {
  if (typeof wire !== 'string' || !wire.startsWith('rk2.')) return null;
  const body = wire.slice(4);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) return null;
  try {
    const key = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (key === null || typeof key !== 'object' || typeof key.project_id !== 'string' || typeof key.role_kind !== 'string') {
      return null;
    }
    return { project_id: key.project_id, role_kind: key.role_kind, scope_id: key.scope_id ?? null };
  } catch {
    return null;
  }
}

export function run({ args, options, io }) {
  const path = args[0];
  const now = intOption(options.now, 'now') ?? Date.now();
  const { db, version } = openHub(path, options, io);
  let rows;
  try {
    requireTables(db, path, version, ['role_registry', 'role_candidates']);
    rows = sqlite(path, () =>
      db
        .prepare(
          `SELECT r.*, (SELECT COUNT(*) FROM role_candidates c WHERE c.role_key_wire = r.role_key_wire) AS candidates
           FROM role_registry r ORDER BY r.role_key_wire`,
        )
        .all(),
    );
  } finally {
    db.close();
  }
  const roles = rows.map((row) => {
    const key = decodeRoleKey(row.role_key_wire);
    // The store's listRolesWithExpiredHolder rule: a holder whose lease is unset or past.
    const expired = row.holder_agent_id != null && (row.holder_lease_expires_ms == null || row.holder_lease_expires_ms <= now);
    const mismatch =
      key !== null && (key.project_id !== row.project_id || key.role_kind !== row.role_kind || (key.scope_id ?? '') !== row.scope_id);
    return {
      role_key_wire: row.role_key_wire,
      phantom: row.state === 'active' && row.holder_agent_id == null,
      role_key: key,
      role_key_problem: key === null ? 'wire does not decode' : mismatch ? 'wire differs from the row columns' : null,
      project_id: row.project_id,
      role_kind: row.role_kind,
      scope_id: row.scope_id,
      state: row.state,
      holder_agent_id: row.holder_agent_id,
      previous_holder_agent_id: row.previous_holder_agent_id,
      epoch: row.epoch,
      version: row.version,
      holder_lease_expires_ms: row.holder_lease_expires_ms,
      lease_left_ms: row.holder_lease_expires_ms == null ? null : row.holder_lease_expires_ms - now,
      holder_expired: expired,
      candidates: row.candidates,
      last_reason: row.last_reason,
      last_transition_ms: row.last_transition_ms,
      blocked_reason: row.blocked_reason,
    };
  });
  return printListing(io, options, {
    key: 'roles',
    rows: roles,
    now,
    columns: [
      ['project', (r) => r.role_key?.project_id ?? r.project_id],
      ['kind', (r) => r.role_key?.role_kind ?? r.role_kind],
      ['scope', (r) => r.role_key?.scope_id ?? (r.scope_id || null)],
      ['state', 'state'],
      ['holder', 'holder_agent_id'],
      ['epoch', 'epoch'],
      ['version', 'version'],
      ['lease left', (r) => (r.holder_agent_id == null ? null : leaseLeft(r.holder_lease_expires_ms, now))],
      ['cand', 'candidates'],
      [
        'flags',
        (r) =>
          [r.holder_expired ? 'HOLDER EXPIRED' : null, r.phantom ? 'ACTIVE WITHOUT HOLDER' : null, r.role_key_problem].filter(Boolean).join('; ') ||
          null,
      ],
    ],
    summary: () => {
      const expired = roles.filter((r) => r.holder_expired).length;
      const phantoms = roles.filter((r) => r.phantom).length;
      return `${roles.length} roles, ${roles.filter((r) => r.holder_agent_id != null).length} held, ${expired} with an expired holder, ${phantoms} active without a holder`;
    },
  });
}
