'use strict';
// The store object: the original store's methods, names and argument handling, by area
// (agents.cjs, roles.cjs, messages.cjs, human.cjs, assign.cjs, stats.cjs, reflexion.cjs),
// on the named statements and the transaction guard of one native connection, for the
// hub release whose schema version the entry names (6, 7 or 8; see storeOfVersion). Every
// JavaScript rule of the original (defaults, `??`, `Number()`, the clamps, `now + x`,
// `JSON.stringify`) stays here, in the original's order; the SQL, the binding and the
// row shapes are native (src/store/).

const { mkdirSync } = require('node:fs');
const { dirname } = require('node:path');

const native = require('../native.cjs');
const { createDbFacade } = require('../database/database.cjs');
const { storeStatements } = require('./statements.cjs');
const { agentMethods } = require('./agents.cjs');
const { roleMethods } = require('./roles.cjs');
const { messageMethods } = require('./messages.cjs');
const { humanMethods } = require('./human.cjs');
const { assignMethods } = require('./assign.cjs');
const { statsMethods } = require('./stats.cjs');
const { reflexionMethods } = require('./reflexion.cjs');

const uuidv7 = () => native.load().uuidv7();
/** Each store's native connection, for checkpointStatus (not a store member: the
 * original's member list stays as it was). */
const connections = new WeakMap();
const BUSY = 'This database connection is busy executing a query';

/** Schema 7's `store.fingerprint`: the path as passed, not as resolved. node:crypto is
 * loaded here, not with the module: it is most of a loaded package's heap, and every
 * major GC marks that heap again. */
const storeFingerprint = (dbPath) =>
  `sqlite:${require('node:crypto').createHash('sha256').update(String(dbPath)).digest('hex')}`;

/**
 * What each schema version changed in the store object, in one place: the areas read
 * these flags where their methods differ (agents.cjs, roles.cjs).
 * - 7: presence generations fence a stale agent's writes; the store gains `type` and
 *   `fingerprint`.
 * - 8: role-registry integrity (no `active` role without a holder; src/store/schema.rs
 *   adds the CHECK and the triggers).
 */
function schemaOf(version) {
  return Object.freeze({ version, fenced: version >= 7, roleIntegrity: version >= 8 });
}

function createStoreOf(schema, dbPath) {
  native.load(); // before touching the file system: the hub falls back when this throws
  mkdirSync(dirname(dbPath), { recursive: true });
  const n = native.connect(dbPath);
  let warnings;
  try {
    warnings = native.storeOpen(n.handle, schema.version);
  } catch (error) {
    n.close(); // a file the store cannot use is not held open
    throw error;
  }
  for (const warning of warnings) console.warn(warning);

  // A caller's callback (a toJSON, a getter, a valueOf) runs while a store method works
  // and may call the store again, as in the original. Closing from there is refused
  // (README, "Deliberate differences"): the method never finds its connection gone.
  let running = 0;
  const busy = () => running > 0;
  const counted = (method) =>
    function storeMethod(...args) {
      running += 1;
      try {
        return method.apply(this, args);
      } finally {
        running -= 1;
      }
    };

  // Methods call each other through `store` (late binding, as in the original), so a
  // caller that replaces one sees the others use it.
  const db = createDbFacade(n, dbPath, busy);
  const { close } = {
    close() {
      if (busy()) throw new TypeError(BUSY);
      n.close();
    },
  };
  const fingerprint = schema.fenced ? storeFingerprint(dbPath) : undefined;
  const store = schema.fenced ? { db, type: 'sqlite', fingerprint, uuidv7, close } : { uuidv7, db, close };
  connections.set(store, n);
  const context = { S: storeStatements(n.handle, schema.version), n, store, dbPath, uuidv7, schema, fingerprint };
  const areas = [agentMethods, messageMethods, humanMethods, statsMethods, assignMethods, reflexionMethods, roleMethods];
  for (const area of areas) {
    for (const [name, method] of Object.entries(area(context))) store[name] = counted(method);
  }
  return store;
}

/** The `createStore(dbPath, options)` of the schema `version` store (6, 7 or 8). */
function storeOfVersion(version) {
  const schema = schemaOf(version);
  return function createStore(dbPath, options = {}) {
    void options; // options.DatabaseCtor is accepted and ignored: SQLite is built in.
    return createStoreOf(schema, dbPath);
  };
}

/**
 * What the store's background checkpointer has done (docs/writes.md): counts of
 * checkpoints, WAL restarts, busy and failed attempts, the last error, the WAL's peak and
 * current size. null for a store whose file has none (in memory, not in WAL mode).
 */
function checkpointStatus(store) {
  const n = connections.get(store);
  if (n === undefined) throw new TypeError('checkpointStatus() takes a store made by createStore()');
  return native.checkpointStatus(n.handle);
}

module.exports = { storeOfVersion, uuidv7, checkpointStatus };
