// Normalization of a call's outcome into the form traces record: clock values as offsets
// from the call's time, store-generated uuids as numbered placeholders, the run's database
// path and its store fingerprint as tokens, long strings as a length and hash.

import { createHash } from "node:crypto";

/** Numbers within this distance of the call's wall time are treated as clock values. */
export const TIME_WINDOW_MS = 7 * 86_400_000;
/** Strings longer than this are replaced by a length+hash marker. */
export const LONG_STRING_CHARS = 4096;

export const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const PLACEHOLDER = /^<(uuid|bad-uuid):(\d+)>$/;

function sha256Hex(s) {
  return createHash("sha256").update(s, "utf8").digest("hex");
}

/** The store fingerprint of the v7+ stores: "sqlite:" + sha256 of the database path. */
export function storeFingerprintOf(path) {
  return `sqlite:${sha256Hex(String(path))}`;
}
/** How a fingerprint of this run's database path is written in traces. */
export const FINGERPRINT_TOKEN = storeFingerprintOf("<dbPath>");

export function formatOffset(deltaMs) {
  let n = Math.round(deltaMs / 1000);
  if (Object.is(n, -0)) n = 0;
  return n < 0 ? `T-${-n}s` : `T+${n}s`;
}

export function isPlainObject(v) {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Checks a store-generated UUID string. Returns null when fine, else a reason. */
export function uuidProblem(s, callTime) {
  if (s !== s.toLowerCase()) return "not lowercase";
  if (s[14] !== "7") return `version nibble ${s[14]} (expected 7)`;
  if (!"89ab".includes(s[19])) return `variant nibble ${s[19]} (expected 8,9,a,b)`;
  const ms = Number.parseInt(s.slice(0, 8) + s.slice(9, 13), 16);
  if (Math.abs(ms - callTime) > TIME_WINDOW_MS) {
    return `embedded time ${ms} is not near the call time`;
  }
  return null;
}

/**
 * The normalization state of one run: which uuid stands for which placeholder, and the
 * run's database path. The harness extends it, so recording and replaying share it.
 */
export class Normalizer {
  /**
   * @param {object} options
   *   mode: "record" (new uuids numbered by first appearance) or
   *         "replay" (new uuids bound to the placeholder recorded at the same place)
   *   literalUuids: Set of uuid strings that are data and must stay verbatim
   *   dbPath: this run's database path, recorded as "<dbPath>"
   */
  constructor({ mode, literalUuids, dbPath }) {
    this.mode = mode;
    this.literalUuids = literalUuids;
    this.dbPath = dbPath;
    // v7+ stores expose "sqlite:" + sha256(dbPath) (store.fingerprint, effective.store_fingerprint);
    // it is recorded as the fingerprint of the path token "<dbPath>" (see normString)
    this.fingerprint = storeFingerprintOf(dbPath);
    this.kOf = new Map(); // uuid string -> K
    this.uuidOf = new Map(); // K -> uuid string
    this.badK = new Set();
    this.nextK = 1;
    this.unmatched = 0;
    this.checkErrors = [];
  }

  normUuid(s, callTime, hint) {
    if (this.kOf.has(s)) {
      const k = this.kOf.get(s);
      return this.badK.has(k) ? `<bad-uuid:${k}>` : `<uuid:${k}>`;
    }
    let k = null;
    if (this.mode === "record") {
      k = this.nextK++;
    } else if (typeof hint === "string") {
      const m = PLACEHOLDER.exec(hint);
      if (m && !this.uuidOf.has(Number(m[2]))) k = Number(m[2]);
    }
    if (k == null) {
      this.unmatched += 1;
      return `<uuid:unmatched-${this.unmatched}>`;
    }
    this.kOf.set(s, k);
    this.uuidOf.set(k, s);
    const problem = uuidProblem(s, callTime);
    if (problem) {
      this.badK.add(k);
      this.checkErrors.push(`uuid ${s}: ${problem}`);
      return `<bad-uuid:${k}>`;
    }
    return `<uuid:${k}>`;
  }

  normString(s, callTime, hint) {
    if (s === this.dbPath) return "<dbPath>";
    if (s === this.fingerprint) return FINGERPRINT_TOKEN;
    if (UUID_SHAPE.test(s)) {
      if (this.literalUuids.has(s)) return s;
      return this.normUuid(s, callTime, hint);
    }
    if (ISO_SHAPE.test(s)) {
      const ms = Date.parse(s);
      if (Number.isFinite(ms) && Math.abs(ms - callTime) <= TIME_WINDOW_MS) {
        return `ISO:${formatOffset(ms - callTime)}`;
      }
      return s;
    }
    if (s.length > LONG_STRING_CHARS) {
      return `<str:len=${s.length}:sha256=${sha256Hex(s).slice(0, 32)}>`;
    }
    return s;
  }

  normalize(value, callTime, hint) {
    if (value === undefined) return "$undefined";
    if (value === null) return null;
    switch (typeof value) {
      case "boolean":
        return value;
      case "number":
        if (!Number.isFinite(value)) return { $number: String(value) };
        if (Math.abs(value - callTime) <= TIME_WINDOW_MS) {
          return formatOffset(value - callTime);
        }
        return Object.is(value, -0) ? 0 : value;
      case "bigint":
        return { $bigint: String(value) };
      case "string":
        return this.normString(value, callTime, hint);
      case "function":
        return "$function";
      case "symbol":
        return { $symbol: String(value) };
      default:
        break;
    }
    if (typeof value.then === "function") return "$promise";
    if (Array.isArray(value)) {
      const h = Array.isArray(hint) ? hint : [];
      return value.map((v, i) => this.normalize(v, callTime, h[i]));
    }
    if (value instanceof Uint8Array) {
      return { $bytes: Buffer.from(value).toString("base64") };
    }
    const h = hint !== null && typeof hint === "object" && !Array.isArray(hint) ? hint : {};
    const out = {};
    for (const k of Object.keys(value)) {
      out[k] = this.normalize(value[k], callTime, h[k]);
    }
    if (!isPlainObject(value)) {
      const name = value.constructor?.name;
      if (name && name !== "Object") out.$class = name;
    }
    return out;
  }

  normalizeError(e) {
    const fix = (s) => (typeof s === "string" ? s.split(this.dbPath).join("<dbPath>") : s);
    if (e !== null && typeof e === "object") {
      return {
        name: e.name ?? null,
        message: fix(e.message ?? null),
        code: e.code ?? null,
      };
    }
    return { name: null, message: fix(String(e)), code: null, thrown: typeof e };
  }

}
