'use strict';
// The role registry: who holds the CTO and lead roles of a project, under leases, epochs
// and compare-and-set, with candidates and the restart recovery.

const native = require('../native.cjs');
const { TxKind } = require('../protocol.cjs');
const { ROLE_REACHABILITY_STATES, decodeRoleKey } = require('./role-key.cjs');
const { atomic, elementFlags, transaction } = require('./statements.cjs');

const KEY_FILTERS = ['project_id', 'role_kind', 'scope_id', 'state'];

/** The identity a call's `role_key_wire` names; own identity fields must agree with it. */
function roleIdentity(input) {
  const roleKeyWire = input?.role_key_wire ?? input?.roleKeyWire;
  const decoded = decodeRoleKey(roleKeyWire);
  const identity = {
    role_key_wire: roleKeyWire,
    project_id: decoded.project_id,
    role_kind: decoded.role_kind,
    scope_id: decoded.scope_id ?? '',
  };
  for (const field of ['project_id', 'role_kind', 'scope_id']) {
    if (Object.hasOwn(input, field) && input[field] !== identity[field]) {
      throw new Error(`role key identity mismatch: ${field}`);
    }
  }
  return identity;
}

/** Why a guarded write found the role other than expected (strict comparisons). */
function roleFailureReason(current, expected) {
  if (!current) return 'not_found';
  if (current.version !== expected.version) return 'stale_version';
  if (current.epoch !== expected.epoch) return 'stale_epoch';
  if (current.activation_seq !== expected.activation_seq) return 'stale_activation_seq';
  if (current.activation_id !== expected.activation_id) return 'stale_activation_id';
  return 'cas_conflict';
}

function checkState(state) {
  if (!ROLE_REACHABILITY_STATES.includes(state)) {
    throw new Error(`invalid role reachability state: ${state}`);
  }
}

function roleMethods({ S, n, uuidv7, schema }) {
  // Schema 8 also resets a holderless `active` role (a phantom an older file may hold;
  // its triggers refuse new ones) like an orphaned activation.
  const resetsPhantoms = schema.roleIntegrity;
  const getRole = (wire) => S.getRole.get(wire) ?? null;

  function reserveRole(input) {
    const identity = roleIdentity(input);
    const current = getRole(identity.role_key_wire);
    const expectedVersion = input.expected_version ?? input.expectedVersion ?? current?.version;
    const expectedEpoch = input.expected_epoch ?? input.expectedEpoch ?? current?.epoch;
    if (current && expectedVersion !== current.version) return { ok: false, reason: 'stale_version', role: current };
    if (current && expectedEpoch !== current.epoch) return { ok: false, reason: 'stale_epoch', role: current };

    const nextEpoch = input.epoch ?? input.next_epoch ?? (current ? current.epoch + 1 : 0);
    if (current && nextEpoch !== current.epoch + 1) return { ok: false, reason: 'stale_epoch', role: current };
    const nextActivationSeq = input.activation_seq ?? input.next_activation_seq ?? (current ? current.activation_seq + 1 : 0);
    if (current && nextActivationSeq !== current.activation_seq + 1) {
      return { ok: false, reason: 'stale_activation_seq', role: current };
    }

    const state = input.state ?? (input.holder_agent_id ? 'elected-probing' : 'electable');
    checkState(state);
    // `??` keeps the current value for an explicit null, except blocked_reason, which
    // only undefined keeps.
    const row = {
      ...identity,
      state,
      holder_agent_id: input.holder_agent_id ?? null,
      previous_holder_agent_id:
        input.previous_holder_agent_id ??
        (current?.holder_agent_id !== input.holder_agent_id
          ? current?.holder_agent_id ?? null
          : current?.previous_holder_agent_id ?? null),
      epoch: nextEpoch,
      activation_seq: nextActivationSeq,
      activation_id: input.activation_id ?? (input.holder_agent_id ? uuidv7() : current?.activation_id ?? null),
      activation_deadline_ms: input.activation_deadline_ms ?? current?.activation_deadline_ms ?? null,
      holder_lease_expires_ms: input.holder_lease_expires_ms ?? current?.holder_lease_expires_ms ?? null,
      charter_version: input.charter_version ?? current?.charter_version ?? null,
      charter_acked_epoch: input.charter_acked_epoch ?? current?.charter_acked_epoch ?? null,
      retry_count: input.retry_count ?? current?.retry_count ?? 0,
      next_probe_ms: input.next_probe_ms ?? current?.next_probe_ms ?? null,
      blocked_reason: input.blocked_reason === undefined ? current?.blocked_reason ?? null : input.blocked_reason,
      last_transition_ms: input.last_transition_ms ?? Date.now(),
      last_reason: input.last_reason ?? 'role_reserved',
      version: 0,
      expected_version: current?.version,
      expected_epoch: current?.epoch,
    };

    if (!current) {
      S.insertRoleReservation.run(row);
    } else if (S.updateRoleReservation.run(row).changes !== 1) {
      const latest = getRole(identity.role_key_wire);
      const guard = {
        version: current.version,
        epoch: current.epoch,
        activation_seq: current.activation_seq,
        activation_id: current.activation_id,
      };
      return { ok: false, reason: roleFailureReason(latest, guard), role: latest };
    }
    return { ok: true, role: S.getRole.get(identity.role_key_wire) };
  }

  function recoverRegistry(now) {
    for (const role of S.listRoles.all()) {
      const guard = { role_key_wire: role.role_key_wire, expected_version: role.version, expected_epoch: role.epoch, now };
      if (role.holder_agent_id && (role.holder_lease_expires_ms == null || role.holder_lease_expires_ms <= now)) {
        S.recoverExpiredRole.run(guard);
      } else if (role.holder_agent_id) {
        S.recoverLiveRole.run({ ...guard, activation_id: uuidv7() });
      } else if (role.activation_id || role.state === 'elected-probing' || (resetsPhantoms && role.state === 'active')) {
        S.recoverOrphanedActivation.run(guard);
      }
    }
    const roles = S.listRoles.all();
    return {
      roles,
      candidates: roles.flatMap((role) => S.listRoleCandidates.all(role.role_key_wire)),
      pending_messages: roles.flatMap((role) => S.pendingRoleMessages.all(role.role_key_wire, now)),
    };
  }

  return {
    getRole(roleKeyWire) {
      decodeRoleKey(roleKeyWire);
      return getRole(roleKeyWire);
    },

    upsertRoleReservation(input) {
      return transaction(n, TxKind.IMMEDIATE, () => reserveRole(input));
    },

    compareAndSetRole(input) {
      const identity = roleIdentity(input);
      return atomic(n, () => {
        const current = getRole(identity.role_key_wire);
        if (!current) return { ok: false, reason: 'not_found', role: null };

        const hasExpectedActivationSeq =
          Object.hasOwn(input, 'expected_activation_seq') ||
          Object.hasOwn(input, 'expectedActivationSeq') ||
          Object.hasOwn(input, 'activation_seq');
        const hasExpectedActivationId =
          Object.hasOwn(input, 'expected_activation_id') ||
          Object.hasOwn(input, 'expectedActivationId') ||
          Object.hasOwn(input, 'activation_id');
        const expected = {
          version: input.expected_version ?? input.expectedVersion ?? input.version,
          epoch: input.expected_epoch ?? input.expectedEpoch ?? input.epoch,
          activation_seq: input.expected_activation_seq ?? input.expectedActivationSeq ?? input.activation_seq,
          // An explicit null expects no activation id.
          activation_id: Object.hasOwn(input, 'expected_activation_id')
            ? input.expected_activation_id
            : Object.hasOwn(input, 'expectedActivationId')
              ? input.expectedActivationId
              : input.activation_id,
        };
        if (expected.version == null || expected.epoch == null || !hasExpectedActivationSeq || !hasExpectedActivationId) {
          return { ok: false, reason: 'invalid_cas', role: current };
        }
        const reason = roleFailureReason(current, expected);
        if (reason !== 'cas_conflict') return { ok: false, reason, role: current };

        const patch = input.patch ?? input.changes ?? {};
        const state = patch.state ?? current.state;
        checkState(state);
        // `=== undefined` keeps the current value: a null in the patch clears it.
        const patched = (key) => (patch[key] === undefined ? current[key] : patch[key]);
        const next = {
          role_key_wire: identity.role_key_wire,
          expected_version: expected.version,
          expected_epoch: expected.epoch,
          expected_activation_seq: expected.activation_seq,
          expected_activation_id: expected.activation_id,
          state,
          holder_agent_id: patched('holder_agent_id'),
          previous_holder_agent_id: patched('previous_holder_agent_id'),
          activation_id: patched('activation_id'),
          activation_deadline_ms: patched('activation_deadline_ms'),
          holder_lease_expires_ms: patched('holder_lease_expires_ms'),
          charter_version: patched('charter_version'),
          charter_acked_epoch: patched('charter_acked_epoch'),
          retry_count: patch.retry_count ?? current.retry_count,
          next_probe_ms: patched('next_probe_ms'),
          blocked_reason: patched('blocked_reason'),
          last_transition_ms: patch.last_transition_ms ?? Date.now(),
          last_reason: patch.last_reason ?? current.last_reason,
        };
        if (S.compareAndSetRole.run(next).changes !== 1) {
          const latest = getRole(identity.role_key_wire);
          return { ok: false, reason: roleFailureReason(latest, expected), role: latest };
        }
        return { ok: true, role: S.getRole.get(identity.role_key_wire) };
      });
    },

    listRoleKeys(filter = {}) {
      // The filters given, in the original's order; the SQL is built from them natively
      // and `params` bound by name.
      const columns = [];
      const params = {};
      for (const field of KEY_FILTERS) {
        if (filter[field] !== undefined) {
          columns.push(field);
          params[field] = filter[field];
        }
      }
      let states = null;
      if (Array.isArray(filter.states) && filter.states.length > 0) {
        states = elementFlags(filter.states);
        filter.states.forEach((state, index) => {
          params[`state_${index}`] = state;
        });
      }
      return native.storeListRoleKeys(n.handle, columns, states, params).map((row) => row.role_key_wire);
    },

    listRolesWithExpiredHolder(now) {
      return S.expiredHolderRoles.all(now);
    },

    listRoleCandidates(roleKeyWire) {
      decodeRoleKey(roleKeyWire);
      return S.listRoleCandidates.all(roleKeyWire);
    },

    upsertRoleCandidate(input) {
      const { role_key_wire } = roleIdentity(input);
      // The row is computed as the original computed it, from an autocommit read of the
      // current candidate and before any transaction: the caller's getters and a toJSON of
      // transport_locators run outside it, so a write they make is kept when the upsert
      // then fails. The upsert and the re-read are one transaction.
      const current = S.getRoleCandidate.get(role_key_wire, input.agent_id);
      const row = {
        role_key_wire,
        agent_id: input.agent_id,
        source: input.source ?? current?.source ?? 'operator',
        priority: input.priority ?? current?.priority ?? 0,
        // The current locators as the original parsed them (its fallback: []).
        transport_locators_json: JSON.stringify(input.transport_locators ?? (current ? current.transport_locators : [])),
        consecutive_probe_failures: input.consecutive_probe_failures ?? current?.consecutive_probe_failures ?? 0,
        excluded_until_ms: input.excluded_until_ms === undefined ? current?.excluded_until_ms ?? null : input.excluded_until_ms,
        last_probe_ms: input.last_probe_ms === undefined ? current?.last_probe_ms ?? null : input.last_probe_ms,
        last_probe_code: input.last_probe_code === undefined ? current?.last_probe_code ?? null : input.last_probe_code,
        updated_at_ms: input.updated_at_ms ?? Date.now(),
      };
      return atomic(n, () => {
        S.upsertRoleCandidate.run(row);
        return S.getRoleCandidate.get(role_key_wire, input.agent_id) ?? null;
      });
    },

    updateCandidateReachability(input) {
      const { role_key_wire } = roleIdentity(input);
      return atomic(n, () => {
        const current = S.getRoleCandidate.get(role_key_wire, input.agent_id);
        if (!current) return { ok: false, reason: 'not_found' };
        let failures = input.consecutive_probe_failures ?? current.consecutive_probe_failures;
        if (input.probe_failed === true || input.increment_probe_failures === true) {
          failures = current.consecutive_probe_failures + 1;
        } else if (input.probe_succeeded === true) {
          failures = 0;
        }
        S.updateCandidateReachability.run({
          role_key_wire,
          agent_id: input.agent_id,
          consecutive_probe_failures: failures,
          excluded_until_ms: input.excluded_until_ms === undefined ? current.excluded_until_ms : input.excluded_until_ms,
          last_probe_ms: input.last_probe_ms ?? Date.now(),
          last_probe_code: input.last_probe_code === undefined ? current.last_probe_code : input.last_probe_code,
          updated_at_ms: input.updated_at_ms ?? Date.now(),
        });
        return { ok: true, candidate: S.getRoleCandidate.get(role_key_wire, input.agent_id) ?? null };
      });
    },

    listPendingRoleMessages(roleKeyWire, now) {
      decodeRoleKey(roleKeyWire);
      return S.pendingRoleMessages.all(roleKeyWire, now);
    },

    recoverRoleRegistry(now) {
      return transaction(n, TxKind.IMMEDIATE, () => recoverRegistry(now));
    },
  };
}

module.exports = { roleMethods };
