// The command line: options, the store implementation from STORE_IMPL, the per-file and
// final lines, the failure report. Usage is described in tools/trace-replay.mjs.

import { writeFileSync } from "node:fs";

import { show } from "./compare.mjs";
import { engineName } from "./engine-wording.mjs";
import { importImpl } from "./files.mjs";
import { replayFile } from "./replay.mjs";

function parseCli(argv) {
  const opts = {
    messages: "exact",
    ignoreKeyOrder: false,
    ignoreWarnings: false,
    maxReport: 20,
    maxDiffs: 6,
    verbose: false,
    jsonReport: null,
    warmup: 0,
    loneSurrogates: "bytes",
    files: [],
  };
  for (const a of argv) {
    if (a.startsWith("--messages=")) opts.messages = a.slice(11);
    else if (a === "--ignore-key-order") opts.ignoreKeyOrder = true;
    else if (a === "--ignore-warnings") opts.ignoreWarnings = true;
    else if (a.startsWith("--max-report=")) opts.maxReport = Number(a.slice(13));
    else if (a.startsWith("--max-diffs=")) opts.maxDiffs = Number(a.slice(12));
    else if (a === "--verbose") opts.verbose = true;
    else if (a.startsWith("--json-report=")) opts.jsonReport = a.slice(14);
    else if (a.startsWith("--warmup=")) opts.warmup = Number(a.slice(9));
    else if (a.startsWith("--lone-surrogates=")) opts.loneSurrogates = a.slice(18);
    else if (a === "-h" || a === "--help") opts.help = true;
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else opts.files.push(a);
  }
  if (!["exact", "ignore"].includes(opts.messages)) {
    throw new Error("--messages must be exact or ignore");
  }
  if (!["bytes", "replaced"].includes(opts.loneSurrogates)) {
    throw new Error("--lone-surrogates must be bytes or replaced");
  }
  if (!Number.isInteger(opts.warmup) || opts.warmup < 0) {
    throw new Error("--warmup must be a whole number of calls");
  }
  return opts;
}

/**
 * The report of the calls accepted with a message in this engine's own words: a line
 * with their number, then one line per distinct pair of messages (tools/runtimes/ reads it).
 */
export function wordingLines(file, worded, engine = engineName()) {
  const lines = [
    `engine wording (${file}): ${worded.length} call(s) accepted whose only difference is a TypeError message that ${engine} words otherwise for the same operation:`,
  ];
  const pairs = new Map();
  for (const w of worded) {
    const key = JSON.stringify([w.what, w.expected, w.actual]);
    pairs.set(key, (pairs.get(key) ?? 0) + 1);
  }
  for (const [key, count] of pairs) {
    const [what, expected, actual] = JSON.parse(key);
    lines.push(`  ${count}x ${what}: recorded (V8) ${JSON.stringify(expected)}, this engine ${JSON.stringify(actual)}`);
  }
  return lines;
}

export async function main() {
  let opts;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (e) {
    console.error(String(e.message));
    process.exit(2);
  }
  if (opts.help || opts.files.length === 0) {
    console.error(
      "usage: STORE_IMPL=./module.mjs node trace-replay.mjs [--messages=exact|ignore] [--ignore-key-order] [--ignore-warnings] [--max-report=N] [--verbose] [--warmup=N] [--lone-surrogates=bytes|replaced] <trace.jsonl|x.expected.json> ...",
    );
    process.exit(2);
  }
  const implSpec = process.env.STORE_IMPL;
  if (!implSpec) {
    console.error("STORE_IMPL is not set (path of a module exporting createStore)");
    process.exit(2);
  }
  const impl = await importImpl(implSpec);
  if (typeof impl.createStore !== "function") {
    console.error(`STORE_IMPL module ${implSpec} does not export createStore`);
    process.exit(2);
  }
  const report = { failures: [] };
  let passed = 0;
  let failed = 0;
  for (const file of opts.files) {
    const r = await replayFile(impl, file, opts, report);
    passed += r.passed;
    failed += r.failed;
    if (opts.files.length > 1) {
      console.log(`${file}: ${r.passed} passed, ${r.failed} failed`);
    }
    for (const w of r.timingWarnings) {
      console.log(`timing warning (${file}): ${w} — clock-normalized values may differ`);
    }
    if (r.shifted > 0) {
      console.log(`timing (${file}): ${r.shifted} call(s) accepted with clock-normalized values one second off (see the timing warnings)`);
    }
    if (r.worded.length > 0) console.log(wordingLines(file, r.worded).join("\n"));
  }
  const shown = report.failures.slice(0, opts.maxReport);
  for (const f of shown) {
    const where = opts.files.length > 1 ? `${f.file} ` : "";
    console.log(`FAIL ${where}#${f.i} ${f.call}(${show(f.args).slice(1, -1)})`);
    for (const d of f.diffs.slice(0, opts.maxDiffs)) {
      const note = d.note ? ` (${d.note})` : "";
      console.log(`  ${d.path}${note}: expected ${show(d.expected)}, got ${show(d.actual)}`);
    }
    if (f.diffs.length > opts.maxDiffs) {
      console.log(`  ... ${f.diffs.length - opts.maxDiffs} more difference(s)`);
    }
  }
  if (report.failures.length > shown.length) {
    console.log(`... ${report.failures.length - shown.length} more failing call(s) not shown`);
  }
  if (opts.jsonReport) {
    writeFileSync(opts.jsonReport, `${JSON.stringify(report.failures, null, 2)}\n`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}
