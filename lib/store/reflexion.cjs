'use strict';
// Reflexion memory: entries of an error pattern, its context and solution, with a
// confidence learnt from hits.

const native = require('../native.cjs');
const { recalcConfidence } = require('./limits.cjs');
const { atomic } = require('./statements.cjs');

/** `%<pattern>%` for LIKE, `%`, `_` and `\` escaped, the escaped text cut at 100. */
function likePattern(errorPattern) {
  const escaped = errorPattern.replace(/[%_\\]/g, '\\$&');
  return `%${escaped.slice(0, 100)}%`;
}

function reflexionMethods({ S, n, store, uuidv7 }) {
  return {
    addReflexion({
      type = 'reflexion',
      error_pattern,
      error_message,
      context = {},
      solution,
      solution_code = null,
      adaptive_state = {},
      confidence = 0.5,
      hit_count = 1,
      success_count = 0,
      last_hit_ms,
      created_at_ms,
      updated_at_ms,
    }) {
      const now = Date.now();
      const id = uuidv7();
      const row = {
        id,
        type,
        error_pattern,
        error_message,
        context_json: JSON.stringify(context),
        solution,
        solution_code,
        adaptive_state_json: JSON.stringify(adaptive_state),
        confidence,
        hit_count,
        success_count,
        last_hit_ms: last_hit_ms ?? now,
        created_at_ms: created_at_ms ?? now,
        updated_at_ms: updated_at_ms ?? now,
      };
      return atomic(n, () => {
        S.insertReflexion.run(row);
        return store.getReflexion(id);
      });
    },

    getReflexion(id) {
      return S.getReflexionById.get(id) ?? null;
    },

    // An exact match first (every one), else a LIKE match (at most 10). Context keys whose
    // value is not null must match too; their JSON paths are bound, never pasted into the
    // SQL (README, "Deliberate differences").
    findReflexion(errorPattern, context = {}) {
      const ctxKeys = Object.keys(context).filter((k) => context[k] != null);
      const ctxVals = ctxKeys.map((k) => context[k]);
      if (ctxKeys.length === 0) {
        const rows = S.findReflexionExact.all(errorPattern);
        if (rows.length) return rows;
        return S.findReflexionLike.all(likePattern(errorPattern));
      }
      const rows = native.storeFindReflexion(n.handle, false, ctxKeys, [errorPattern, ...ctxVals]);
      if (rows.length) return rows;
      return native.storeFindReflexion(n.handle, true, ctxKeys, [likePattern(errorPattern), ...ctxVals]);
    },

    updateReflexionHit(id, success = false) {
      const now = Date.now();
      return atomic(n, () => {
        if (success) {
          S.updateReflexionHitSuccess.run(now, now, id);
        } else {
          S.updateReflexionHitOnly.run(now, now, id);
        }
        const entry = store.getReflexion(id);
        if (entry && entry.hit_count > 0) {
          const conf = recalcConfidence(entry);
          S.updateReflexionConfidence.run(Math.max(0, Math.min(1, conf)), now, id);
        }
        return store.getReflexion(id);
      });
    },

    listReflexion(filters = {}) {
      const { type, minConfidence = Number.NEGATIVE_INFINITY, projectSlug } = filters;
      return S.listReflexionEntries
        .all()
        .filter((entry) => !type || entry.type === type)
        .filter((entry) => entry.confidence >= minConfidence)
        .filter((entry) => !projectSlug || entry.adaptive_state?.project_slug === projectSlug);
    },

    patchReflexion(id, patch = {}) {
      return atomic(n, () => {
        const current = store.getReflexion(id);
        if (!current) return null;
        const next = {
          ...current,
          ...patch,
          context: patch.context ?? current.context,
          adaptive_state: patch.adaptive_state ?? current.adaptive_state,
          updated_at_ms: patch.updated_at_ms ?? Date.now(),
        };
        // A fixed column list: keys of the patch outside it are ignored.
        S.patchReflexion.run(
          next.type,
          next.error_pattern,
          next.error_message,
          JSON.stringify(next.context ?? {}),
          next.solution,
          next.solution_code ?? null,
          JSON.stringify(next.adaptive_state ?? {}),
          next.confidence,
          next.hit_count,
          next.success_count,
          next.last_hit_ms,
          next.updated_at_ms,
          id,
        );
        return store.getReflexion(id);
      });
    },

    deleteReflexion(id) {
      return S.deleteReflexionEntry.run(id).changes > 0;
    },

    pruneReflexion(maxAge_ms = 30 * 24 * 3600 * 1000, minConfidence = 0.2) {
      const cutoff = Date.now() - maxAge_ms;
      return S.pruneReflexionEntries.run(cutoff, minConfidence).changes;
    },
  };
}

module.exports = { reflexionMethods };
