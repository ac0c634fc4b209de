// The harness: executes trace lines against a store implementation, keeping the trace's
// clock (one tick per second) and its listeners, and returns each call's normalized record.
// The trace generator imports it too, so recording and replaying use one code path.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { format } from "node:util";

import { Normalizer, PLACEHOLDER, UUID_SHAPE, isPlainObject, uuidProblem } from "./normalize.mjs";

/** A segment between two ticks should not take longer than this (see golden/README.md). */
export const SEGMENT_BUDGET_MS = 400;

const ARG_MARKERS = new Set([
  "$now",
  "$number",
  "$bigint",
  "$text",
  "$listener",
  "$listenerRef",
]);

/** mulberry32: tiny seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXT_POOLS = [
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ",
  " .,;:!?-_/()[]{}<>=+*&^%$#@~`'\"\\|\n\t",
  "àéîõüçñßøåæœ",
  "漢字仮名交じり文한국어텍스트",
  "😀🚀🧪🔥🌍👩‍💻",
];

const textCache = new Map();
/** Deterministic text of exactly `len` UTF-16 code units (never splits a surrogate pair). */
export function generateText(seed, len) {
  const key = `${seed}:${len}`;
  if (textCache.has(key)) return textCache.get(key);
  const rnd = mulberry32(seed);
  let out = "";
  while (out.length < len) {
    const pool = TEXT_POOLS[Math.floor(rnd() * TEXT_POOLS.length)];
    const chars = Array.from(pool);
    let ch = chars[Math.floor(rnd() * chars.length)];
    if (out.length + ch.length > len) ch = "x".repeat(len - out.length);
    out += ch;
  }
  textCache.set(key, out);
  return out;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

export class Harness extends Normalizer {
  /**
   * @param {object} impl      the imported STORE_IMPL module
   * @param {object} options
   *   mode: "record" (new uuids numbered by first appearance) or
   *         "replay" (new uuids bound to the placeholder recorded at the same place)
   *   literalUuids: Set of uuid strings that are data and must stay verbatim
   *   fixtureFile: for fixture expectations, the database file copied as <dbPath>
   */
  constructor(impl, options = {}) {
    const tmpDir = mkdtempSync(join(tmpdir(), "tfx-trace-"));
    const dbPath = options.fixtureFile
      ? join(tmpDir, "hub.db")
      : join(tmpDir, "nested", "dir", "hub.db");
    super({ mode: options.mode ?? "record", literalUuids: options.literalUuids ?? new Set(), dbPath });
    this.impl = impl;
    this.tmpDir = tmpDir;
    if (options.fixtureFile) copyFileSync(options.fixtureFile, this.dbPath);
    this.store = null;
    this.listeners = new Map(); // listener name -> function
    this.returnedFns = new Map(); // call index -> function returned by that call
    this.events = [];
    this.base = null;
    this.lastEnd = 0;
    this.segmentStart = null;
    this.segmentCalls = 0;
    this.maxSegmentMs = 0;
    this.segmentLog = [];
    this.timingWarnings = [];
    this.unboundArgs = [];
  }

  dispose() {
    try {
      this.store?.close?.();
    } catch {}
    try {
      rmSync(this.tmpDir, { recursive: true, force: true });
    } catch {}
  }

  // ---- argument resolution ------------------------------------------------

  resolve(spec, callTime) {
    if (spec === "$undefined") return undefined;
    if (typeof spec === "string") {
      if (spec === "<dbPath>") return this.dbPath;
      const m = PLACEHOLDER.exec(spec);
      if (m) {
        const k = Number(m[2]);
        if (this.uuidOf.has(k)) return this.uuidOf.get(k);
        this.unboundArgs.push(spec);
        return spec;
      }
      return spec;
    }
    if (Array.isArray(spec)) return spec.map((v) => this.resolve(v, callTime));
    if (spec !== null && typeof spec === "object") {
      const keys = Object.keys(spec);
      if (keys.length === 1 && ARG_MARKERS.has(keys[0])) {
        const v = spec[keys[0]];
        switch (keys[0]) {
          case "$now":
            return callTime + v;
          case "$number":
            return v === "-0" ? -0 : Number(v);
          case "$bigint":
            return BigInt(v);
          case "$text":
            return generateText(v.seed, v.len);
          case "$listener":
            return this.makeListener(v.name, v.action ?? "record");
          case "$listenerRef": {
            const fn = this.listeners.get(v);
            if (!fn) throw new Error(`trace refers to unknown listener ${v}`);
            return fn;
          }
        }
      }
      const out = {};
      for (const k of keys) out[k] = this.resolve(spec[k], callTime);
      return out;
    }
    return spec;
  }

  makeListener(name, action) {
    const harness = this;
    const fn = function traceListener(event, row) {
      harness.events.push({ listener: name, event, row });
      if (action === "throw") throw new Error(`listener ${name} throws on purpose`);
      if (typeof action === "string" && action.startsWith("unsub:")) {
        const target = harness.returnedFns.get(Number(action.slice(6)));
        if (typeof target === "function") target();
      }
    };
    this.listeners.set(name, fn);
    return fn;
  }

  // ---- timing --------------------------------------------------------------

  async tick(k) {
    if (this.base == null) this.base = Date.now();
    const target = this.base + k * 1000;
    const now = Date.now();
    if (this.segmentStart != null) {
      const work = now - this.segmentStart;
      this.segmentLog.push({ tick: k, work_ms: work, calls: this.segmentCalls });
      this.maxSegmentMs = Math.max(this.maxSegmentMs, work);
      if (work > SEGMENT_BUDGET_MS) {
        this.timingWarnings.push(
          `segment before tick ${k} took ${work} ms (${this.segmentCalls} calls; budget ${SEGMENT_BUDGET_MS} ms)`,
        );
      }
    }
    if (now > target) {
      this.timingWarnings.push(`tick ${k} reached ${now - target} ms late`);
    } else {
      if (target - now > 5) await sleep(target - now - 3);
      while (Date.now() < target) {}
    }
    this.segmentStart = Math.max(target, Date.now());
    this.segmentCalls = 0;
    this.lastEnd = Date.now();
  }

  // ---- calls ---------------------------------------------------------------

  invoke(call, args, index, expected) {
    switch (call) {
      case "createStore": {
        this.store = this.impl.createStore(...args);
        const names =
          this.mode === "replay" && expected && isPlainObject(expected.result)
            ? Object.keys(expected.result)
            : Object.keys(this.store).sort();
        const shape = {};
        for (const name of names) shape[name] = typeof this.store[name];
        return { value: shape, raw: true };
      }
      case "module.uuidv7":
        if (typeof this.impl.uuidv7 !== "function") {
          throw new TypeError("module export uuidv7 is not a function");
        }
        return { value: this.impl.uuidv7() };
      case "$member": {
        // reads a non-method store member (v7+: type, fingerprint)
        if (this.store == null) throw new TypeError("no store is open");
        return { value: this.store[args[0]] };
      }
      case "$unsubscribe": {
        const fn = this.returnedFns.get(args[0]);
        if (typeof fn !== "function") {
          throw new TypeError(`call #${args[0]} did not return a function`);
        }
        return { value: fn() };
      }
      case "$uuidBatch": {
        const n = args[0];
        const ids = [];
        for (let i = 0; i < n; i++) ids.push(this.store.uuidv7());
        const callTime = Date.now();
        const valid = ids.every(
          (s) => typeof s === "string" && UUID_SHAPE.test(s) && !uuidProblem(s, callTime),
        );
        let increasing = true;
        for (let i = 1; i < ids.length; i++) if (!(ids[i] > ids[i - 1])) increasing = false;
        return {
          value: {
            count: ids.length,
            all_valid_v7: valid,
            strictly_increasing: increasing,
            unique: new Set(ids).size === ids.length,
          },
          raw: true,
        };
      }
      case "db.run": {
        const [sql, ...params] = args;
        const r = this.store.db.prepare(sql).run(...params);
        return { value: { changes: r.changes } };
      }
      case "db.get": {
        const [sql, ...params] = args;
        return { value: this.store.db.prepare(sql).get(...params) };
      }
      case "db.all": {
        const [sql, ...params] = args;
        return { value: this.store.db.prepare(sql).all(...params) };
      }
      case "db.pluck": {
        const [sql, ...params] = args;
        return { value: this.store.db.prepare(sql).pluck().get(...params) };
      }
      default: {
        if (this.store == null) throw new TypeError("no store is open");
        const fn = this.store[call];
        if (typeof fn !== "function") {
          throw new TypeError(`store.${call} is not a function`);
        }
        const value = fn.apply(this.store, args);
        if (typeof value === "function") this.returnedFns.set(index, value);
        return { value };
      }
    }
  }

  /**
   * Executes one trace line ({i, call, args}) and returns the normalized record.
   * `expected` (replay mode) is the recorded line; it only guides uuid binding.
   */
  async exec(line, expected = null) {
    const { i, call } = line;
    const args = line.args ?? [];
    if (this.base == null) {
      this.base = Date.now();
      this.segmentStart = this.base;
    }
    if (call === "$tick") {
      await this.tick(args[0]);
      return { i, call, args, result: "$undefined" };
    }
    // every call starts in a later millisecond than the previous call ended
    while (Date.now() <= this.lastEnd) {}
    const callTime = Date.now();
    this.events = [];
    this.checkErrors = [];
    this.unboundArgs = [];
    const warnings = [];
    const originalWarn = console.warn;
    console.warn = (...a) => warnings.push(format(...a));
    let outcome;
    let error;
    let threw = false;
    try {
      const resolved = this.resolve(args, callTime);
      outcome = this.invoke(call, resolved, i, expected);
    } catch (e) {
      threw = true;
      error = e;
    } finally {
      console.warn = originalWarn;
    }
    this.lastEnd = Date.now();
    this.segmentCalls += 1;

    const record = { i, call, args };
    if (threw) {
      record.error = this.normalizeError(error);
    } else if (outcome.raw) {
      record.result = outcome.value;
    } else {
      record.result = this.normalize(outcome.value, callTime, expected?.result);
    }
    if (this.events.length) {
      const hints = Array.isArray(expected?.events) ? expected.events : [];
      record.events = this.events.map((ev, j) => ({
        listener: ev.listener,
        event: this.normalize(ev.event, callTime, hints[j]?.event),
        row: this.normalize(ev.row, callTime, hints[j]?.row),
      }));
    }
    if (warnings.length) {
      record.warnings = warnings.map((w) => w.split(this.dbPath).join("<dbPath>"));
    }
    if (this.checkErrors.length) record.check_errors = this.checkErrors;
    if (this.unboundArgs.length) record.unbound_args = this.unboundArgs;
    return record;
  }
}
