// Replaying one file: its calls run on a fresh harness (after an optional warm-up on a
// scratch store) and each outcome is compared with the recorded one.

import { existsSync } from "node:fs";

import { asReplaced, compareRecords, isSecondShift } from "./compare.mjs";
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
        pending.push({ file, i: line.i, call: line.call, args: line.args, diffs });
      }
    }
  } finally {
    h.dispose();
  }
  // When a segment overran its second or a tick came late (a slow or emulated CPU), times
  // taken then are a second off wherever they are read back later: a call whose only
  // differences are clock-normalized values exactly one second off is accepted; any other
  // difference fails it, and with no timing warning nothing is accepted.
  let shifted = 0;
  for (const failure of pending) {
    if (h.timingWarnings.length > 0 && failure.diffs.every(isSecondShift)) {
      passed += 1;
      shifted += 1;
    } else {
      failed += 1;
      report.failures.push(failure);
    }
  }
  return { passed, failed, shifted, timingWarnings: h.timingWarnings, maxSegmentMs: h.maxSegmentMs };
}
