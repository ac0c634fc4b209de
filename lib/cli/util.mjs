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
  const cells = rows.map((row) => columns.map(([, key]) => {
    const v = typeof key === 'function' ? key(row) : row[key];
    return v == null ? '-' : String(v);
  }));
  const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((r) => r[i].length)));
  const line = (values) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [
    line(columns.map(([header]) => header)),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.map(line),
  ].join('\n');
}

/** "key   value" lines with aligned values. */
export function pairs(entries) {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
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
  println(stream, JSON.stringify(value, null, 2));
}

/** Writes text plus a newline to a stream (the io object's stdout or stderr). */
export function println(stream, text = '') {
  stream.write(`${text}\n`);
}

/** Parses a non-negative integer option, or throws a usage error naming it. */
export function intOption(value, name, { min = 0 } = {}) {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(String(value)) || Number(value) < min) {
    throw new CliError(`--${name} expects an integer >= ${min}, got "${value}"`);
  }
  return Number(value);
}
