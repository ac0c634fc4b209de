// `triflux-store check <db>`: integrity_check (or quick_check), foreign_key_check and the
// store's v6 schema compared with the file. Exit 0 only when every check is clean.

import { openHub, sqlite, STORE_SCHEMA_VERSION } from '../open.mjs';
import { compareSchema, describeSchema } from '../schema.mjs';
import { int, println } from '../util.mjs';

const MAX_INTEGRITY_LINES = 100;

export function run({ args, options, io }) {
  const path = args[0];
  const { db, version } = openHub(path, options, io);
  let integrity;
  let foreignKeys;
  let schema;
  try {
    sqlite(path, () => {
      const pragma = options.quick ? 'quick_check' : 'integrity_check';
      integrity = db.pragma(`${pragma}(${MAX_INTEGRITY_LINES})`).map((row) => Object.values(row)[0]);
      foreignKeys = db.pragma('foreign_key_check');
      schema = compareSchema(describeSchema(db));
    });
  } finally {
    db.close();
  }
  const findings = [];
  if (version !== STORE_SCHEMA_VERSION) {
    findings.push({
      check: 'schema',
      kind: 'schema_version',
      name: '_meta.schema_version',
      detail: `schema_version is ${version}, the store expects ${STORE_SCHEMA_VERSION} (the hub migrates the file when it next opens it)`,
    });
  }
  const integrityOk = integrity.length === 1 && integrity[0] === 'ok';
  if (!integrityOk) {
    for (const text of integrity) findings.push({ check: 'integrity', kind: 'integrity', name: null, detail: text });
  }
  for (const fk of foreignKeys) {
    findings.push({
      check: 'foreign_keys',
      kind: 'foreign_key_violation',
      name: `${fk.table}#${fk.rowid}`,
      detail: `${fk.table} row ${fk.rowid ?? '(without rowid)'} refers to a missing ${fk.parent} row (foreign key ${fk.fkid})`,
    });
  }
  for (const f of schema.findings) findings.push({ check: 'schema', ...f });
  const clean = findings.length === 0;

  if (options.json) {
    println(
      io.stdout,
      JSON.stringify(
        {
          file: path,
          schema_version: version,
          clean,
          integrity: integrityOk ? 'ok' : integrity,
          integrity_mode: options.quick ? 'quick_check' : 'integrity_check',
          foreign_key_violations: foreignKeys.length,
          schema_compared: schema.compared,
          findings,
          notes: schema.notes,
        },
        null,
        2,
      ),
    );
    return clean ? 0 : 1;
  }
  const schemaFindings = findings.filter((f) => f.check === 'schema');
  const c = schema.compared;
  println(io.stdout, `${options.quick ? 'quick_check' : 'integrity_check'}    ${integrityOk ? 'ok' : `${integrity.length} problem${integrity.length > 1 ? 's' : ''}`}`);
  println(io.stdout, `foreign_key_check  ${foreignKeys.length === 0 ? 'ok' : `${int(foreignKeys.length)} violation${foreignKeys.length > 1 ? 's' : ''}`}`);
  println(
    io.stdout,
    `schema v${STORE_SCHEMA_VERSION}          ${schemaFindings.length === 0 ? 'ok' : `${schemaFindings.length} difference${schemaFindings.length > 1 ? 's' : ''}`} (${c.tables} tables, ${c.columns} columns, ${c.indexes} indexes compared)`,
  );
  if (findings.length > 0) {
    println(io.stdout);
    for (const f of findings) println(io.stdout, `  ${f.check}: ${f.detail}`);
  }
  for (const n of schema.notes) println(io.stdout, `  note: ${n.detail}`);
  println(io.stdout, clean ? '\nclean' : `\nNOT CLEAN: ${findings.length} finding${findings.length > 1 ? 's' : ''}`);
  return clean ? 0 : 1;
}
