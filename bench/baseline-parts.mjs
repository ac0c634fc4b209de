// The parts of the benchmark baseline that are not statements: ids, role-key wires, row
// parsing and clamps, each done the way the hub's original store does them (bench/baseline.mjs).

import { randomBytes } from 'node:crypto';

// ---------------------------------------------------------------- ids

const pool = Buffer.alloc(256);
let poolAt = pool.length;
let lastMs = -1;
let seq = 0;

function random(n) {
  if (poolAt + n > pool.length) {
    randomBytes(pool.length).copy(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return pool.subarray(at, at + n);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Monotonic RFC 9562 v7 id (48-bit ms clock, 12-bit per-ms sequence, random tail). */
export function uuidv7() {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    seq += 1;
    if (seq > 0xfff) {
      ms += 1;
      seq = 0;
    }
  } else {
    seq = 0;
  }
  lastMs = ms;
  const tail = random(8);
  const b = new Array(16);
  let t = ms;
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (tail[0] & 0x3f);
  for (let i = 1; i < 8; i++) b[8 + i] = tail[i];
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[b[i]];
  }
  return s;
}

// ---------------------------------------------------------------- role keys

const PROJECT_RE = /^prj_[A-Za-z0-9_-]{22}$/u;
const SCOPE_RE = /^scp_[A-Za-z0-9_-]{22}$/u;
const B64URL_RE = /^[A-Za-z0-9_-]+$/u;
export const ROLE_STATES = ['electable', 'elected-probing', 'active', 'unreachable', 'quarantined'];

function keyError(code) {
  const e = new Error(code);
  e.code = code;
  return e;
}

function canonicalKeyJson(key) {
  const head = `{"project_id":${JSON.stringify(key.project_id)},"role_kind":`;
  return key.role_kind === 'lead'
    ? `${head}"lead","scope_id":${JSON.stringify(key.scope_id)}}`
    : `${head}"cto"}`;
}

function checkKeyFields(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw keyError('ROLE_KEY_INVALID');
  for (const k of Object.keys(v)) {
    if (k !== 'project_id' && k !== 'role_kind' && k !== 'scope_id') throw keyError('ROLE_KEY_FIELD_UNSUPPORTED');
  }
  if (typeof v.project_id !== 'string' || !PROJECT_RE.test(v.project_id)) throw keyError('PROJECT_ID_INVALID');
  if (v.role_kind !== 'cto' && v.role_kind !== 'lead') throw keyError('ROLE_KIND_UNSUPPORTED');
  const scoped = Object.hasOwn(v, 'scope_id');
  if (v.role_kind === 'cto') {
    if (scoped) throw keyError('ROLE_SCOPE_FORBIDDEN');
    return { project_id: v.project_id, role_kind: 'cto' };
  }
  if (!scoped || typeof v.scope_id !== 'string') throw keyError('SCOPE_REQUIRED');
  if (!SCOPE_RE.test(v.scope_id)) throw keyError('SCOPE_ID_INVALID');
  return { project_id: v.project_id, role_kind: 'lead', scope_id: v.scope_id };
}

/** Encodes a role identity as its `rk2.` wire (used by the harness to make keys). */
export function encodeRoleKey(key) {
  const norm = checkKeyFields(key);
  const wire = `rk2.${Buffer.from(canonicalKeyJson(norm), 'utf8').toString('base64url')}`;
  if (Buffer.byteLength(wire, 'utf8') > 512) throw keyError('ROLE_KEY_WIRE_TOO_LONG');
  return wire;
}

/** Full validation of a wire, with the same steps (and so roughly the same cost) as the hub's. */
export function decodeRoleKey(wire) {
  if (typeof wire !== 'string' || Buffer.byteLength(wire, 'utf8') > 512) throw keyError('ROLE_KEY_WIRE_INVALID');
  if (!wire.startsWith('rk2.')) throw keyError('ROLE_KEY_WIRE_PREFIX');
  const body = wire.slice(4);
  if (!body || !B64URL_RE.test(body)) throw keyError('ROLE_KEY_NON_CANONICAL');
  let parsed;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw keyError('ROLE_KEY_NON_CANONICAL');
  }
  let norm;
  try {
    norm = checkKeyFields(parsed);
  } catch (e) {
    if (e?.code) throw e;
    throw keyError('ROLE_KEY_NON_CANONICAL');
  }
  if (encodeRoleKey(norm) !== wire) throw keyError('ROLE_KEY_NON_CANONICAL');
  return norm;
}

// ---------------------------------------------------------------- row parsing

function json(text, fallback) {
  if (text == null) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

export function agentRow(r) {
  if (!r) return null;
  const { capabilities_json: c, topics_json: t, metadata_json: m, ...rest } = r;
  return { ...rest, capabilities: json(c, []), topics: json(t, []), metadata: json(m, {}) };
}

export function messageRow(r) {
  if (!r) return null;
  const { payload_json: p, ...rest } = r;
  return { ...rest, payload: json(p, {}) };
}

export function assignRow(r) {
  if (!r) return null;
  const { payload_json: p, result_json: res, error_json: err, ...rest } = r;
  return { ...rest, payload: json(p, {}), result: json(res, null), error: json(err, null) };
}

export function reflexionRow(r) {
  if (!r) return null;
  const { context_json: c, adaptive_state_json: a, ...rest } = r;
  return { ...rest, type: rest.type || 'reflexion', context: json(c, {}), adaptive_state: json(a, {}) };
}

export function candidateRow(r) {
  if (!r) return null;
  const { transport_locators_json: t, ...rest } = r;
  return { ...rest, transport_locators: json(t, []) };
}

// ---------------------------------------------------------------- clamps

export const DEFAULT_ASSIGN_MS = 600000;

function clampInt(value, fallback, lo, hi) {
  const n = Number(value);
  if (!Number.isFinite(n)) return fallback;
  return Math.max(lo, Math.min(Math.trunc(n), hi));
}
export const clampDuration = (v, fb = DEFAULT_ASSIGN_MS) => clampInt(v, fb, 1000, 86400000);
export const clampPriority = (v, fb = 5) => clampInt(v, fb, 1, 9);
export const clampMax = (v, fb = 20) => clampInt(v, fb, 1, 100);
export const TERMINAL = ['succeeded', 'failed', 'timed_out'];
