// What the replay suites replay: every golden trace (golden/ for schema 6, golden-v7/,
// golden-v8/) and every fixture expectation (fixtures/*.expected.json), each with the
// package entry of the schema version it was recorded at. __test__/replay.test.mjs (Node)
// and the Bun and Deno lanes (tools/runtimes/) replay this same list.

import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

/** The entry that answers for each schema version (traces and expectations name theirs). */
export const ENTRIES = { 6: "./index.mjs", 7: "./v7.mjs", 8: "./v8.mjs" };
export const TRACE_DIRS = { 6: "golden", 7: "golden-v7", 8: "golden-v8" };

/** The schema a file was recorded at: its `schema` header (absent in schema 6 files). */
function schemaOf(root, rel) {
  const text = readFileSync(join(root, rel), "utf8");
  const header = rel.endsWith(".jsonl") ? JSON.parse(text.slice(0, text.indexOf("\n"))) : JSON.parse(text);
  return header.schema ?? 6;
}

/** Every trace and fixture expectation under `root`, in order: { rel, schema, entry }. */
export function replayFiles(root) {
  const rels = [
    ...Object.values(TRACE_DIRS).flatMap((dir) =>
      readdirSync(join(root, dir))
        .filter((f) => f.endsWith(".jsonl"))
        .sort()
        .map((f) => `${dir}/${f}`),
    ),
    ...readdirSync(join(root, "fixtures"))
      .filter((f) => f.endsWith(".expected.json"))
      .sort()
      .map((f) => `fixtures/${f}`),
  ];
  return rels.map((rel) => {
    const schema = schemaOf(root, rel);
    return { rel, schema, entry: ENTRIES[schema] };
  });
}

// Deliberate differences: EXCLUDED lists, per file, the call indexes (`i`) whose outcome
// this package deliberately answers differently from the original, each with its reason.
// Those calls are removed from a temporary copy of the trace before replaying. Later calls
// still depend on earlier ones, so only exclude a call whose outcome (not effect) differs.
// It is empty: no deliberate difference is known.
/** @type {Record<string, Record<number, string>>} file (relative to the repo) -> { i: reason } */
export const EXCLUDED = {
  // "golden/trace-public-1.jsonl": { 123: "why this outcome deliberately differs" },
};

/** The file to replay (`rel` under `root`): the original, or a copy in `scratch` without the excluded calls. */
export function traceToReplay(root, rel, scratch) {
  const excluded = EXCLUDED[rel] ?? {};
  const skip = new Set(Object.keys(excluded).map(Number));
  const original = join(root, rel);
  if (skip.size === 0) return { path: original, removed: 0 };
  const out = join(scratch, basename(rel));
  let removed = 0;
  if (rel.endsWith(".jsonl")) {
    const lines = readFileSync(original, "utf8").split("\n");
    const kept = lines.filter((line) => {
      if (!line.trim()) return true;
      const obj = JSON.parse(line);
      if ("call" in obj && skip.has(obj.i)) {
        removed += 1;
        return false;
      }
      return true;
    });
    writeFileSync(out, kept.join("\n"));
  } else {
    const doc = JSON.parse(readFileSync(original, "utf8"));
    const before = doc.calls.length;
    doc.calls = doc.calls.filter((c) => !skip.has(c.i));
    removed = before - doc.calls.length;
    // The fixture database stays where it is: point at it absolutely.
    if (doc.fixture) doc.fixture = resolve(root, "fixtures", doc.fixture);
    writeFileSync(out, JSON.stringify(doc));
  }
  assert.equal(removed, skip.size, `${rel}: every excluded index must name a call in the file`);
  return { path: out, removed };
}

/** How a replay's last line reads: "N passed, M failed"; null when it is not that line. */
export function replayCounts(stdout) {
  const last = stdout.trim().split("\n").at(-1) ?? "";
  const m = /^(\d+) passed, (\d+) failed$/.exec(last);
  return m ? { last, passed: Number(m[1]), failed: Number(m[2]) } : null;
}

/** Runs `job`s (functions returning promises) with at most `limit` in flight. */
export function limited(limit) {
  let active = 0;
  const queue = [];
  const next = () => {
    if (active >= limit || queue.length === 0) return;
    active += 1;
    const { job, resolveJob, rejectJob } = queue.shift();
    job()
      .then(resolveJob, rejectJob)
      .finally(() => {
        active -= 1;
        next();
      });
  };
  return (job) =>
    new Promise((resolveJob, rejectJob) => {
      queue.push({ job, resolveJob, rejectJob });
      next();
    });
}
