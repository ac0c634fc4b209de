// Replaying one file: its calls run on a fresh harness (after an optional warm-up on a
// scratch store) and each outcome is compared with the recorded one.

import { existsSync } from "node:fs";

import { asReplaced, compareRecords, isSecondShift } from "./compare.mjs";
import { engineWorded } from "./engine-wording.mjs";
import { collectLiteralUuids, loadTraceFile } from "./files.mjs";
import { Harness } from "./harness.mjs";

/**
 * Replays one trace or fixture file against `impl`; failing calls are added to
 * `report.failures`. Returns the counts and the harness's timing warnings.
 */
export async function replayFile(impl, file, opts, report) {
  const trace = loadTraceFile(file);
  const literalUuids =
    trace.kind === "fixture" ? collectLiteralUuids(trace.lines) : new Set();
  if (trace.kind === "fixture" && !existsSync(trace.fixtureFile ?? "")) {
    throw new Error(`fixture database not found: ${trace.fixtureFile}`);
  }
  const harness = () => new Harness(impl, { mode: "replay", literalUuids, fixtureFile: trace.fixtureFile });
  if (opts.warmup > 0) {
    const w = harness();
    w.tick = async () => {};
    try {
      for (const line of trace.lines.slice(0, opts.warmup)) await w.exec(line, line);
    } finally {
      w.dispose();
    }
  }
  const h = harness();
  let passed = 0;
  let failed = 0;
  const pending = [];
  try {
    for (const line of trace.lines) {
      const rec = await h.exec(line, line);
      const recorded = opts.loneSurrogates === "replaced" && Object.hasOwn(line, "result") ? { ...line, result: asReplaced(line.result) } : line;
      const diffs = compareRecords(recorded, rec, opts);
      if (diffs.length === 0) {
        passed += 1;
        if (opts.verbose) console.log(`ok   #${line.i} ${line.call}`);
      } else {
        pending.push({ file, i: line.i, call: line.call, args: line.args, diffs, errorName: rec.error?.name });
      }
    }
  } finally {
    h.dispose();
  }
  // When a segment overran its second or a tick came late (a slow or emulated CPU), times
  // taken then are a second off wherever they are read back later: a call whose only
  // differences are clock-normalized values exactly one second off is accepted; with no
  // timing warning none is. A TypeError message that this engine words differently for
  // the same operation is accepted too (engine-wording.mjs; on V8 only the recorded one).
  // Any other difference fails the call.
  let shifted = 0;
  const worded = [];
  for (const failure of pending) {
    const wording = [];
    const explained = failure.diffs.every((d) => {
      if (h.timingWarnings.length > 0 && isSecondShift(d)) return true;
      const operation = d.path === "error.message" ? engineWorded(d.expected, d.actual, failure.errorName) : null;
      if (operation) wording.push({ i: failure.i, call: failure.call, expected: d.expected, actual: d.actual, what: operation.what });
      return operation !== null;
    });
    if (explained) {
      passed += 1;
      if (wording.length > 0) worded.push(...wording);
      if (failure.diffs.some(isSecondShift)) shifted += 1;
    } else {
      failed += 1;
      report.failures.push(failure);
    }
  }
  return { passed, failed, shifted, worded, timingWarnings: h.timingWarnings, maxSegmentMs: h.maxSegmentMs };
}
