'use strict';
// Role keys (the hub's role contract): `rk2.` + unpadded base64url of the canonical JSON
// `{"project_id":"prj_…","role_kind":"cto"}` or
// `{"project_id":"prj_…","role_kind":"lead","scope_id":"scp_…"}`, at most 512 bytes. The
// checks run in the contract's order, so the first failing rule decides the error; each
// error's message is its code.

const PROJECT_ID = /^prj_[A-Za-z0-9_-]{22}$/u;
const SCOPE_ID = /^scp_[A-Za-z0-9_-]{22}$/u;
const BASE64URL = /^[A-Za-z0-9_-]+$/u;
const ROLE_KINDS = ['cto', 'lead'];
const KEY_FIELDS = new Set(['project_id', 'role_kind', 'scope_id']);
const MAX_WIRE_BYTES = 512;

const ROLE_REACHABILITY_STATES = Object.freeze(['electable', 'elected-probing', 'active', 'unreachable', 'quarantined']);

function roleKeyError(code) {
  const error = new Error(code);
  error.code = code;
  return error;
}

const isRecord = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The one normal form of a role identity, or the contract's error. */
function normalizeRoleKey(input) {
  if (!isRecord(input)) throw roleKeyError('ROLE_KEY_INVALID');
  if (Object.keys(input).some((field) => !KEY_FIELDS.has(field))) throw roleKeyError('ROLE_KEY_FIELD_UNSUPPORTED');
  const { project_id: projectId, role_kind: roleKind } = input;
  if (typeof projectId !== 'string' || !PROJECT_ID.test(projectId)) throw roleKeyError('PROJECT_ID_INVALID');
  if (!ROLE_KINDS.includes(roleKind)) throw roleKeyError('ROLE_KIND_UNSUPPORTED');
  const hasScope = Object.hasOwn(input, 'scope_id');
  if (roleKind === 'cto') {
    if (hasScope) throw roleKeyError('ROLE_SCOPE_FORBIDDEN');
    return { project_id: projectId, role_kind: 'cto' };
  }
  if (!hasScope || typeof input.scope_id !== 'string') throw roleKeyError('SCOPE_REQUIRED');
  if (!SCOPE_ID.test(input.scope_id)) throw roleKeyError('SCOPE_ID_INVALID');
  return { project_id: projectId, role_kind: 'lead', scope_id: input.scope_id };
}

function canonicalJson(key) {
  return key.role_kind === 'lead'
    ? `{"project_id":${JSON.stringify(key.project_id)},"role_kind":"lead","scope_id":${JSON.stringify(key.scope_id)}}`
    : `{"project_id":${JSON.stringify(key.project_id)},"role_kind":"cto"}`;
}

function encodeRoleKey(key) {
  const wire = `rk2.${Buffer.from(canonicalJson(normalizeRoleKey(key)), 'utf8').toString('base64url')}`;
  if (Buffer.byteLength(wire, 'utf8') > MAX_WIRE_BYTES) throw roleKeyError('ROLE_KEY_WIRE_TOO_LONG');
  return wire;
}

// A hub asks about the same few roles on every tick: valid wires are remembered (decoding
// is a pure function of the wire), so a repeated one costs a Map lookup. Bounded: the
// memo starts over once it holds MEMO_MAX wires.
const MEMO_MAX = 1024;
const decoded = new Map();

/** The identity a wire names; throws the contract's error for anything else. */
function decodeRoleKey(wire) {
  const known = decoded.get(wire);
  if (known !== undefined) return known;
  const key = Object.freeze(decodeWire(wire));
  if (decoded.size >= MEMO_MAX) decoded.clear();
  decoded.set(wire, key);
  return key;
}

function decodeWire(wire) {
  if (typeof wire !== 'string' || Buffer.byteLength(wire, 'utf8') > MAX_WIRE_BYTES) throw roleKeyError('ROLE_KEY_WIRE_INVALID');
  if (!wire.startsWith('rk2.')) throw roleKeyError('ROLE_KEY_WIRE_PREFIX');
  const encoded = wire.slice(4);
  if (!encoded || !BASE64URL.test(encoded)) throw roleKeyError('ROLE_KEY_NON_CANONICAL');
  let parsed;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw roleKeyError('ROLE_KEY_NON_CANONICAL');
  }
  let normalized;
  try {
    normalized = normalizeRoleKey(parsed);
  } catch (error) {
    if (error?.code) throw error;
    throw roleKeyError('ROLE_KEY_NON_CANONICAL');
  }
  // Only the canonical spelling is a wire: re-encoding must give it back.
  if (encodeRoleKey(normalized) !== wire) throw roleKeyError('ROLE_KEY_NON_CANONICAL');
  return normalized;
}

module.exports = { ROLE_REACHABILITY_STATES, decodeRoleKey };
