// Trace files: a golden trace (.jsonl) or a fixture expectation (.json), the uuids that are
// data in them, and the store implementation under test.

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { UUID_SHAPE } from "./normalize.mjs";

/** Reads a trace (.jsonl) or a fixture expectation (.json). */
export function loadTraceFile(file) {
  const text = readFileSync(file, "utf8");
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") && !file.endsWith(".jsonl")) {
    const doc = JSON.parse(text);
    if (Array.isArray(doc.calls)) {
      const fixtureFile = doc.fixture ? resolve(dirname(file), doc.fixture) : null;
      return { kind: "fixture", header: doc, lines: doc.calls, fixtureFile };
    }
  }
  const lines = [];
  let header = null;
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    const obj = JSON.parse(raw);
    if (typeof obj.call === "string") lines.push(obj);
    else if (header == null) header = obj;
  }
  return { kind: "trace", header, lines, fixtureFile: null };
}

/** Every uuid-shaped string literally present in a value (placeholders excluded). */
export function collectLiteralUuids(value, out = new Set()) {
  if (typeof value === "string") {
    if (UUID_SHAPE.test(value)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectLiteralUuids(v, out);
  } else if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) collectLiteralUuids(v, out);
  }
  return out;
}

export async function importImpl(spec) {
  const url = spec.startsWith("file:") ? spec : pathToFileURL(resolve(spec)).href;
  return import(url);
}
