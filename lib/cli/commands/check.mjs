// `triflux-store check <db>`: integrity_check (or quick_check), foreign_key_check and the
// schema of the file's own version (6, 7 or 8: the store of that hub release; an older
// file is compared with v6) compared with the file. Exit 0 only when every check is clean.
//
// A damaged file is what this command is for: an SQLite error met while opening or
// checking it is a finding (exit 1), and the other checks still run. Only a file that is
// not a SQLite database at all (or not a hub database) is bad input (exit 2).

import { checkFile, openReadOnly, schemaVersion, storeFor } from '../open.mjs';
import { compareSchema, describeSchema } from '../schema.mjs';
import { CliError, int, printJson, println, visible } from '../util.mjs';

const MAX_INTEGRITY_LINES = 100;

/** The SqliteError behind `error` (thrown as it is or as a CliError's cause), or null. */
function sqliteErrorOf(error) {
  if (error && error.name === 'SqliteError') return error;
  if (error instanceof CliError && error.cause && error.cause.name === 'SqliteError') return error.cause;
  return null;
}

/** Runs one check; an SQLite error becomes a finding of that check instead of the command's failure. */
function attempt(findings, check, what, fn) {
  try {
    return fn();
  } catch (error) {
    const cause = sqliteErrorOf(error);
    if (!cause) throw error;
    findings.push({ check, kind: 'sqlite_error', name: cause.code, detail: `${what} failed: ${cause.message} (${cause.code})` });
    return null;
  }
}

/** Runs every check on `path`; returns what the output shows. */
function collect(path, options, io) {
  checkFile(path);
  const findings = [];
  let pragma = options.quick ? 'quick_check' : 'integrity_check';
  const opened = attempt(findings, 'open', 'reading the file', () => openReadOnly(path, { busyTimeout: options.busyTimeout, io }));
  if (!opened) return { findings, version: null, integrity: null, foreignKeys: null, schema: null, pragma };
  const { db } = opened;
  try {
    // A file without _meta, or newer than this package, is not a hub database it can check.
    const version = attempt(findings, 'schema', 'reading the schema version', () => schemaVersion(db, path));
    const lines = (name) => db.pragma(`${name}(${MAX_INTEGRITY_LINES})`).map((row) => Object.values(row)[0]);
    let integrity = attempt(findings, 'integrity', pragma, () => lines(pragma));
    // integrity_check gives up on some damage that quick_check still describes.
    if (integrity === null && pragma === 'integrity_check') {
      pragma = 'quick_check';
      integrity = attempt(findings, 'integrity', pragma, () => lines(pragma));
    }
    const foreignKeys = attempt(findings, 'foreign_keys', 'foreign_key_check', () => db.pragma('foreign_key_check'));
    const against = storeFor(version ?? 6).version;
    const schema = attempt(findings, 'schema', 'reading the schema', () => compareSchema(describeSchema(db), against));
    return { findings, version, integrity, foreignKeys, schema, pragma };
  } finally {
    db.close();
  }
}

export function run({ args, options, io }) {
  const path = args[0];
  const { findings: errors, version, integrity, foreignKeys, schema, pragma } = collect(path, options, io);
  const findings = [];
  const against = storeFor(version ?? 6);
  if (version !== null && version !== against.version) {
    findings.push({
      check: 'schema',
      kind: 'schema_version',
      name: '_meta.schema_version',
      detail: `schema_version is ${version}, the store expects ${against.version} (the hub migrates the file when it next opens it)`,
    });
  }
  const integrityOk = integrity !== null && integrity.length === 1 && integrity[0] === 'ok';
  if (integrity !== null && !integrityOk) {
    for (const text of integrity) findings.push({ check: 'integrity', kind: 'integrity', name: null, detail: text });
  }
  for (const fk of foreignKeys ?? []) {
    findings.push({
      check: 'foreign_keys',
      kind: 'foreign_key_violation',
      name: `${fk.table}#${fk.rowid}`,
      detail: `${fk.table} row ${fk.rowid ?? '(without rowid)'} refers to a missing ${fk.parent} row (foreign key ${fk.fkid})`,
    });
  }
  for (const f of schema?.findings ?? []) findings.push({ check: 'schema', ...f });
  findings.push(...errors);
  const clean = findings.length === 0;
  const notes = schema?.notes ?? [];

  if (options.json) {
    printJson(io.stdout, {
      file: path,
      schema_version: version,
      clean,
      integrity: integrityOk ? 'ok' : integrity,
      integrity_mode: pragma,
      foreign_key_violations: foreignKeys === null ? null : foreignKeys.length,
      schema_compared: schema?.compared ?? null,
      schema_expected: against.version,
      findings,
      notes,
    });
    return clean ? 0 : 1;
  }
  const failed = (check) => errors.some((f) => f.check === check);
  const count = (n, word) => `${int(n)} ${word}${n === 1 ? '' : 's'}`;
  const schemaFindings = findings.filter((f) => f.check === 'schema');
  const integrityText = integrity === null ? 'could not run' : integrityOk ? 'ok' : count(integrity.length, 'problem');
  const fkText = foreignKeys === null ? 'could not run' : foreignKeys.length === 0 ? 'ok' : count(foreignKeys.length, 'violation');
  const c = schema?.compared;
  const schemaText = failed('schema') && !schema
    ? 'could not run'
    : `${schemaFindings.length === 0 ? 'ok' : count(schemaFindings.length, 'difference')} (${c.tables} tables, ${c.columns} columns, ${c.indexes} indexes${c.triggers ? `, ${c.triggers} triggers` : ''} compared)`;
  println(io.stdout, `${pragma.padEnd(19)}${integrityText}`);
  println(io.stdout, `foreign_key_check  ${fkText}`);
  println(io.stdout, `${`schema v${against.version}`.padEnd(19)}${schemaText}`);
  if (findings.length > 0) {
    println(io.stdout);
    for (const f of findings) println(io.stdout, `  ${f.check}: ${visible(f.detail)}`);
  }
  for (const n of notes) println(io.stdout, `  note: ${visible(n.detail)}`);
  println(io.stdout, clean ? '\nclean' : `\nNOT CLEAN: ${count(findings.length, 'finding')}`);
  return clean ? 0 : 1;
}
