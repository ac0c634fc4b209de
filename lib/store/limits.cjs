'use strict';
// The clamps and defaults the original store imported or defined (hub/store.mjs and
// @triflux/core's timeout-defaults and reflexion): Number(x), non-finite gives the
// fallback, then truncate and bound. So null counts as 0 (a null priority is 1).

const MIN_DURATION_MS = 1_000;
const MAX_DURATION_MS = 86_400_000;
const DEFAULT_ASSIGN_TIMEOUT_MS = 600_000;
const DEFAULT_ASSIGN_TTL_MS = 600_000;
const DEFAULT_CONFIDENCE = 0.5;

function clampDurationMs(value, fallback = DEFAULT_ASSIGN_TIMEOUT_MS, min = MIN_DURATION_MS, max = MAX_DURATION_MS) {
  const numeric = Number(value);
  if (!Number.isFinite(numeric)) return fallback;
  return Math.max(min, Math.min(Math.trunc(numeric), max));
}

function clampMaxMessages(value, fallback = 20) {
  const num = Number(value);
  if (!Number.isFinite(num)) return fallback;
  return Math.max(1, Math.min(Math.trunc(num), 100));
}

function clampPriority(value, fallback = 5) {
  const num = Number(value);
  if (!Number.isFinite(num)) return fallback;
  return Math.max(1, Math.min(Math.trunc(num), 9));
}

/**
 * An entry's confidence from its hits: the success ratio, pulled towards 0.5 while there
 * are fewer than 10 hits.
 */
function recalcConfidence(entry) {
  if (!entry?.hit_count || entry.hit_count <= 0) return DEFAULT_CONFIDENCE;
  const ratio = entry.success_count / entry.hit_count;
  const decay = Math.min(1, entry.hit_count / 10);
  return ratio * decay + DEFAULT_CONFIDENCE * (1 - decay);
}

module.exports = {
  DEFAULT_ASSIGN_TIMEOUT_MS,
  DEFAULT_ASSIGN_TTL_MS,
  clampDurationMs,
  clampMaxMessages,
  clampPriority,
  recalcConfidence,
};
