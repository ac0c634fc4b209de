// Comparison of a recorded line with a replayed record: every difference with its path,
// key order included; and how a recorded result reads on a Node that stores lone
// surrogates as U+FFFD.

import { isPlainObject } from "./normalize.mjs";

/** A value shown in one line of a report (at most 160 characters). */
export function show(v) {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

function jsonPath(base, key) {
  if (typeof key === "number") return `${base}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

export function deepDiff(expected, actual, path, diffs, opts = {}) {
  if (expected === actual) return diffs;
  const te = Array.isArray(expected) ? "array" : expected === null ? "null" : typeof expected;
  const ta = Array.isArray(actual) ? "array" : actual === null ? "null" : typeof actual;
  if (te !== ta) {
    diffs.push({ path, expected, actual });
    return diffs;
  }
  if (te === "array") {
    if (expected.length !== actual.length) {
      diffs.push({
        path: `${path}.length`,
        expected: expected.length,
        actual: actual.length,
      });
    }
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) deepDiff(expected[i], actual[i], jsonPath(path, i), diffs, opts);
    return diffs;
  }
  if (te === "object") {
    const ek = Object.keys(expected);
    const ak = Object.keys(actual);
    const aset = new Set(ak);
    const eset = new Set(ek);
    for (const k of ek) {
      if (!aset.has(k)) diffs.push({ path: jsonPath(path, k), expected: expected[k], actual: "<missing key>" });
    }
    for (const k of ak) {
      if (!eset.has(k)) diffs.push({ path: jsonPath(path, k), expected: "<no such key>", actual: actual[k] });
    }
    if (!opts.ignoreKeyOrder) {
      const ce = ek.filter((k) => aset.has(k));
      const ca = ak.filter((k) => eset.has(k));
      const at = ce.findIndex((k, idx) => k !== ca[idx]);
      if (at !== -1) {
        diffs.push({
          path,
          note: `key order differs at position ${at} of ${ce.length}`,
          expected: ce.slice(at, at + 4),
          actual: ca.slice(at, at + 4),
        });
      }
    }
    for (const k of ek) {
      if (aset.has(k)) deepDiff(expected[k], actual[k], jsonPath(path, k), diffs, opts);
    }
    return diffs;
  }
  diffs.push({ path, expected, actual });
  return diffs;
}

/**
 * A recorded result as the original gives it on a Node whose better-sqlite3 stores a lone
 * surrogate as U+FFFD: three U+FFFD (the read-back of the three bytes a lone surrogate
 * was stored as) become one, and in an upper-case hex text each surrogate's three bytes
 * (ED A0-BF 80-BF, never valid UTF-8) become EF BF BD. The recordings hold no other
 * source of either.
 */
export function asReplaced(value) {
  if (typeof value === "string") {
    const read = value.replaceAll("\uFFFD\uFFFD\uFFFD", "\uFFFD");
    if (!/^(?:[0-9A-F]{2})+$/.test(read)) return read;
    // Byte by byte, so that a match never straddles two bytes.
    const bytes = read.match(/../g);
    for (let i = 0; i + 2 < bytes.length; i++) {
      if (bytes[i] === "ED" && /^[AB][0-9A-F]$/.test(bytes[i + 1]) && /^[89AB][0-9A-F]$/.test(bytes[i + 2])) {
        bytes.splice(i, 3, "EF", "BF", "BD");
        i += 2;
      }
    }
    return bytes.join("");
  }
  if (Array.isArray(value)) return value.map(asReplaced);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asReplaced(v)]));
  return value;
}

/** Differences between a recorded line and a replayed record. */
export function compareRecords(expected, actual, opts = {}) {
  const diffs = [];
  const expThrew = Object.hasOwn(expected, "error");
  const actThrew = Object.hasOwn(actual, "error");
  if (expThrew !== actThrew) {
    diffs.push({
      path: expThrew ? "error" : "result",
      note: expThrew ? "expected a throw, got a result" : "expected a result, got a throw",
      expected: expThrew ? expected.error : expected.result,
      actual: actThrew ? actual.error : actual.result,
    });
  } else if (expThrew) {
    const e = expected.error;
    const a = actual.error;
    if (e.name !== a.name) diffs.push({ path: "error.name", expected: e.name, actual: a.name });
    if ((e.code ?? null) !== (a.code ?? null)) {
      diffs.push({ path: "error.code", expected: e.code ?? null, actual: a.code ?? null });
    }
    if (opts.messages !== "ignore" && e.message !== a.message) {
      diffs.push({ path: "error.message", expected: e.message, actual: a.message });
    }
  } else {
    deepDiff(expected.result, actual.result, "result", diffs, opts);
  }
  deepDiff(expected.events ?? [], actual.events ?? [], "events", diffs, opts);
  if (!opts.ignoreWarnings) {
    deepDiff(expected.warnings ?? [], actual.warnings ?? [], "warnings", diffs, opts);
  }
  if (actual.check_errors) {
    diffs.push({ path: "check_errors", expected: [], actual: actual.check_errors });
  }
  if (actual.unbound_args) {
    diffs.push({
      path: "args",
      note: "trace refers to uuids this run never produced",
      expected: [],
      actual: actual.unbound_args,
    });
  }
  return diffs;
}

/** A difference of exactly one second between two clock-normalized values ("T+5s", "T+6s"). */
export function isSecondShift(diff) {
  const seconds = (v) => (typeof v === "string" && /^T[+-]\d+s$/.test(v) ? Number(v.slice(1, -1)) : null);
  const [e, a] = [seconds(diff.expected), seconds(diff.actual)];
  return e !== null && a !== null && Math.abs(e - a) === 1;
}
