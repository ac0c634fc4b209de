// The schema a store of each version expects, and its comparison with a file. The
// expectation is not a copy of src/store/schema.sql: it is read from a fresh in-memory
// store that this package's own createStore of that version builds (its schema.sql plus
// the open-time steps), so it cannot drift from what the store writes.

import { ident, storeFor } from './open.mjs';

/** Tables, columns, declared foreign keys, indexes and triggers of a connection, by name. */
export function describeSchema(db) {
  const tables = {};
  const indexes = {};
  const triggers = {};
  for (const { name, tbl_name: table } of db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").all()) {
    triggers[name] = { table };
  }
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .pluck()
    .all();
  for (const table of names) {
    const columns = {};
    for (const c of db.pragma(`table_info(${ident(table)})`)) {
      columns[c.name] = { type: c.type, notnull: c.notnull, default: c.dflt_value, pk: c.pk };
    }
    const foreignKeys = db
      .pragma(`foreign_key_list(${ident(table)})`)
      .map((f) => `${f.from} -> ${f.table}(${f.to}) on delete ${f.on_delete.toLowerCase()}, on update ${f.on_update.toLowerCase()}`)
      .sort();
    tables[table] = { columns, foreignKeys };
    for (const ix of db.pragma(`index_list(${ident(table)})`)) {
      const keys = db
        .pragma(`index_xinfo(${ident(ix.name)})`)
        .filter((k) => k.key === 1)
        .map((k) => `${k.name ?? '<expression>'}${k.desc ? ' DESC' : ''}${k.coll !== 'BINARY' ? ` COLLATE ${k.coll}` : ''}`);
      indexes[ix.name] = { table, unique: ix.unique === 1, partial: ix.partial === 1, columns: keys };
    }
  }
  return { tables, indexes, triggers };
}

const expected = {};

/**
 * The schema a fresh store of schema `version` has (built once, in memory); with `large`,
 * the schema of a store whose log has grown large enough for the large-log indexes (built
 * the way a hub grows one: 10,000 auditLog calls, the commit that reaches the threshold
 * adds them).
 */
export function expectedSchema(large = false, version = 6) {
  const key = `${version}:${large ? 'large' : 'small'}`;
  if (!expected[key]) {
    const store = storeFor(version).createStore(':memory:');
    try {
      if (large) {
        store.db.transaction(() => {
          for (let i = 0; i < 10_000; i++) store.auditLog({ type: 'event', from: 'check', to: 'check', topic: 'check' });
        })();
      }
      expected[key] = describeSchema(store.db);
    } finally {
      store.close();
    }
  }
  return expected[key];
}

/** A file with the large-log indexes (README: "A hub that runs for months") is compared with that schema. */
const hasLargeLogIndexes = (actual) => 'idx_messages_to_agent_recent' in actual.indexes;

const columnText = (c) =>
  `${c.type || '(no type)'}${c.notnull ? ' NOT NULL' : ''}${c.default != null ? ` DEFAULT ${c.default}` : ''}${c.pk ? ` PRIMARY KEY(${c.pk})` : ''}`;
const indexText = (ix) =>
  `${ix.unique ? 'UNIQUE ' : ''}ON ${ix.table}(${ix.columns.join(', ')})${ix.partial ? ' WHERE …' : ''}`;

/**
 * Compares `actual` (describeSchema of the file) with the expectation of the schema
 * `version` store. Returns { findings, notes, compared }: findings make the file unclean
 * (the store's statements, result shapes or guards would differ); notes are additions the
 * store does not mind.
 */
export function compareSchema(actual, version = 6, want = expectedSchema(hasLargeLogIndexes(actual), version)) {
  const findings = [];
  const notes = [];
  const compared = { tables: 0, columns: 0, indexes: 0, triggers: 0 };
  for (const [name, table] of Object.entries(want.tables)) {
    compared.tables += 1;
    compared.columns += Object.keys(table.columns).length;
    const have = actual.tables[name];
    if (!have) {
      findings.push({ kind: 'missing_table', name, detail: `table ${name} is missing` });
      continue;
    }
    for (const [col, spec] of Object.entries(table.columns)) {
      const got = have.columns[col];
      if (!got) {
        findings.push({ kind: 'missing_column', name: `${name}.${col}`, detail: `column ${name}.${col} (${columnText(spec)}) is missing` });
      } else if (columnText(got) !== columnText(spec)) {
        findings.push({
          kind: 'column_differs',
          name: `${name}.${col}`,
          detail: `column ${name}.${col} is ${columnText(got)}, expected ${columnText(spec)}`,
        });
      }
    }
    for (const col of Object.keys(have.columns)) {
      if (!(col in table.columns)) {
        findings.push({ kind: 'extra_column', name: `${name}.${col}`, detail: `column ${name}.${col} is not in the v${version} schema (SELECT * results would carry it)` });
      }
    }
    const wantFk = table.foreignKeys.join('; ');
    const haveFk = have.foreignKeys.join('; ');
    if (wantFk !== haveFk) {
      findings.push({
        kind: 'foreign_keys_differ',
        name,
        detail: `table ${name} declares foreign keys [${haveFk}], expected [${wantFk}]`,
      });
    }
  }
  for (const name of Object.keys(actual.tables)) {
    if (!(name in want.tables)) notes.push({ kind: 'extra_table', name, detail: `table ${name} is not part of the store's schema` });
  }
  for (const [name, ix] of Object.entries(want.indexes)) {
    compared.indexes += 1;
    const have = actual.indexes[name];
    if (!have) {
      if (actual.tables[ix.table]) findings.push({ kind: 'missing_index', name, detail: `index ${name} ${indexText(ix)} is missing` });
    } else if (indexText(have) !== indexText(ix)) {
      findings.push({ kind: 'index_differs', name, detail: `index ${name} is ${indexText(have)}, expected ${indexText(ix)}` });
    }
  }
  for (const [name, ix] of Object.entries(actual.indexes)) {
    if (!(name in want.indexes)) notes.push({ kind: 'extra_index', name, detail: `index ${name} ${indexText(ix)} is not part of the store's schema` });
  }
  for (const [name, trigger] of Object.entries(want.triggers)) {
    compared.triggers += 1;
    const have = actual.triggers[name];
    if (!have) findings.push({ kind: 'missing_trigger', name, detail: `trigger ${name} on ${trigger.table} is missing` });
    else if (have.table !== trigger.table) findings.push({ kind: 'trigger_differs', name, detail: `trigger ${name} is on ${have.table}, expected ${trigger.table}` });
  }
  for (const [name, trigger] of Object.entries(actual.triggers)) {
    if (!(name in want.triggers)) notes.push({ kind: 'extra_trigger', name, detail: `trigger ${name} on ${trigger.table} is not part of the store's schema` });
  }
  return { findings, notes, compared };
}
