// Shared pieces of the triflux-store command: its error type, output helpers and the
// small formatting rules every subcommand uses.

/** An expected failure: printed as one line on stderr, exit code `exitCode`. */
export class CliError extends Error {
  constructor(message, exitCode = 2, options = undefined) {
    super(message, options);
    this.exitCode = exitCode;
  }
}

/** Exit codes: 0 fine, 1 the subcommand found a problem (check, checkpoint), 2 bad input. */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

// Text from the file or from the arguments reaches a terminal only through visible(): a
// character a terminal would act on instead of showing (C0 controls, DEL, the C1 controls
// U+0080-U+009F of UTF-8 terminals: ESC and CSI start escape sequences, OSC retitles the
// window or writes the clipboard, CR and NL fake lines; the Unicode line separators and
// the bidi embedding, override and isolate controls that reorder a line) is shown as its
// escape, `\x1b`, `\n`, `\u202e`. Backslashes stay as they are (Windows paths).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same characters without C0, which JSON.stringify escapes itself (its layout has newlines). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex = (c, digits) => c.charCodeAt(0).toString(16).padStart(digits, '0');

/** `value` as text safe for a terminal: every unsafe character escaped and visible, on one line. */
export function visible(value) {
  return String(value).replace(UNSAFE, (c) => NAMED[c] ?? (c.charCodeAt(0) < 0x100 ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));
}

/**
 * `value` as JSON that reads back exactly and is safe for a terminal: the characters
 * JSON.stringify leaves raw (DEL, C1, the separators and bidi controls) as \u escapes.
 */
export function jsonText(value, indent = undefined) {
  return JSON.stringify(value, null, indent).replace(UNSAFE_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}

/** 1234567 → "1,234,567" (fixed locale so output does not depend on the machine). */
export function int(n) {
  return Number.isFinite(n) ? Math.trunc(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',') : String(n);
}

/** Bytes as "188,416 B (184.0 KiB)". */
export function bytes(n) {
  if (n == null) return '-';
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = '';
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return unit ? `${int(n)} B (${value.toFixed(1)} ${unit})` : `${int(n)} B`;
}

/** A duration in ms as its two largest units: "3d 4h", "12m", "850ms". */
export function duration(ms) {
  const abs = Math.round(Math.abs(ms));
  if (abs < 1000) return `${abs}ms`;
  const units = [
    ['d', 86400000],
    ['h', 3600000],
    ['m', 60000],
    ['s', 1000],
  ];
  const first = units.findIndex(([, size]) => abs >= size);
  const [u1, s1] = units[first];
  const out = [`${Math.floor(abs / s1)}${u1}`];
  if (first + 1 < units.length) {
    const [u2, s2] = units[first + 1];
    const second = Math.floor((abs % s1) / s2);
    if (second > 0) out.push(`${second}${u2}`);
  }
  return out.join(' ');
}

/** How long until `deadline` (ms), for the "lease left" columns. */
export function leaseLeft(deadline, now) {
  if (deadline == null) return '-';
  const left = deadline - now;
  return left > 0 ? duration(left) : `expired ${duration(left)} ago`;
}

/** ISO time of an epoch-ms value, or "-". */
export function iso(ms) {
  return ms == null || !Number.isFinite(ms) ? '-' : new Date(ms).toISOString();
}

/**
 * A plain text table: `columns` is [[header, key], ...]; values are stringified, null → "-".
 * Columns are separated by two spaces and the header is underlined.
 */
export function table(rows, columns) {
  // Widths count the escaped form, as it is shown.
  const cells = rows.map((row) => columns.map(([, key]) => {
    const v = typeof key === 'function' ? key(row) : row[key];
    return v == null ? '-' : visible(v);
  }));
  const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((r) => r[i].length)));
  const line = (values) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [
    line(columns.map(([header]) => header)),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.map(line),
  ].join('\n');
}

/** "key   value" lines with aligned values (both shown escaped). */
export function pairs(entries) {
  const shown = entries.map(([k, v]) => [visible(k), visible(v)]);
  const width = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/**
 * A listing command's output: with `--json`, `{ now_ms, [key]: rows }`; otherwise a table
 * and a summary line, or "no <key>" when there are no rows. Returns the exit code.
 */
export function printListing(io, options, { key, rows, now, columns, summary }) {
  if (options.json) {
    printJson(io.stdout, { now_ms: now, [key]: rows });
  } else if (rows.length === 0) {
    println(io.stdout, `no ${key}`);
  } else {
    println(io.stdout, table(rows, columns));
    println(io.stdout, `\n${summary(rows)}`);
  }
  return 0;
}

/** `--json` output: the value as indented JSON on its own lines. */
export function printJson(stream, value) {
  println(stream, jsonText(value, 2));
}

/**
 * Writes text plus a newline to a stream (the io object's stdout or stderr). Its newlines
 * are the layout's; every other unsafe character is escaped here as a last guard (a field
 * that may hold a newline is passed through visible() where it is put in the text).
 */
export function println(stream, text = '') {
  stream.write(`${String(text).split('\n').map(visible).join('\n')}\n`);
}

/** Parses a non-negative integer option, or throws a usage error naming it. */
export function intOption(value, name, { min = 0 } = {}) {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(String(value)) || Number(value) < min) {
    throw new CliError(`--${name} expects an integer >= ${min}, got "${value}"`);
  }
  return Number(value);
}
