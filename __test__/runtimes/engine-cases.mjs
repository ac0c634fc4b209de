// What a runtime besides Node must give for the package and for the replay to hold: the
// entries load both ways onto one binary, strings are converted as the runtime's own Node
// version says, and the replay's engine wording reproduces this engine's messages (and
// accepts nothing else). Run by run.mjs on every runtime, and by __test__/runtimes.test.mjs
// on Node.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import * as esmRoot from '../../index.mjs';
import * as esmV8 from '../../v8.mjs';
import { engineName, engineWorded, reproduce } from '../../tools/replay/engine-wording.mjs';

const require = createRequire(import.meta.url);
const onJavaScriptCore = engineName().startsWith('JavaScriptCore');

/** V8's messages for the engine-worded TypeErrors the golden traces hold, one per kind. */
const V8_MESSAGES = [
  "Cannot destructure property 'agent_id' of 'undefined' as it is undefined.",
  "Cannot destructure property 'type' of 'object null' as it is null.",
  "Cannot destructure property 'supervisor_agent' of '(intermediate value)(intermediate value)(intermediate value)' as it is null.",
  "Cannot destructure property 'type' of 'filters' as it is null.",
  "Cannot read properties of null (reading 'max_messages')",
  "Cannot read properties of undefined (reading 'replace')",
  'Cannot convert undefined or null to object',
  'errorPattern.replace is not a function',
  'Do not know how to serialize a BigInt',
];

/** What JavaScriptCore (Bun) says where the package's own code fails as the original's did. */
const JAVASCRIPTCORE_PAIRS = [
  ["Cannot destructure property 'agent_id' of 'undefined' as it is undefined.", "Cannot destructure property 'agent_id' from null or undefined value"],
  ["Cannot read properties of null (reading 'max_messages')", "Cannot destructure property 'max_messages' from null or undefined value"],
  ["Cannot read properties of null (reading 'project_id')", "null is not an object (evaluating 'filter[field]')"],
  ['Cannot convert undefined or null to object', "null is not an object (evaluating 'Object.keys(context)')"],
  ['errorPattern.replace is not a function', "errorPattern.replace is not a function. (In 'errorPattern.replace(/[%_\\\\]/g, \"\\\\$&\")', 'errorPattern.replace' is undefined)"],
  ['Do not know how to serialize a BigInt', 'JSON.stringify cannot serialize BigInt.'],
];

export const engineCases = [
  {
    name: 'the ESM and CommonJS entries load the same classes from one binary, and the store opens through each',
    run({ EsmDatabase, CommonJsDatabase }, dir) {
      const cjsRoot = require('../../index.cjs');
      const cjsV7 = require('../../v7.cjs');
      assert.equal(EsmDatabase, esmRoot.Database);
      assert.equal(CommonJsDatabase, cjsRoot.Database);
      assert.equal(EsmDatabase, CommonJsDatabase);
      assert.equal(esmRoot.SqliteError, cjsRoot.SqliteError);
      const v = esmRoot.version();
      assert.deepEqual(cjsV7.version(), v);
      assert.match(v.binary, /triflux-native-store\.[a-z0-9-]+\.node$/);
      for (const [entry, schema] of [[esmRoot, '6'], [cjsV7, '7'], [esmV8, '8']]) {
        const store = entry.createStore(join(dir, `hub-${schema}.db`));
        store.registerAgent({ agent_id: 'a1', cli: 'codex', topics: ['ops'] });
        assert.deepEqual(store.getAgentsByTopic('ops').map((a) => a.agent_id), ['a1']);
        assert.equal(store.db.prepare("SELECT value FROM _meta WHERE key = 'schema_version'").pluck().get(), schema);
        store.close();
      }
    },
  },
  {
    name: "a lone surrogate is stored as better-sqlite3 stores it on the Node version this runtime reports",
    run({ EsmDatabase }) {
      const db = new EsmDatabase(':memory:');
      const hex = db.prepare('SELECT hex(?)').pluck().get('a\ud800');
      db.close();
      // V8 13 (Node 24) replaced lone surrogates with U+FFFD; earlier Nodes kept their bytes.
      const replaced = Number(process.versions.node.split('.')[0]) >= 24;
      assert.equal(hex, replaced ? '61EFBFBD' : '61EDA080');
    },
  },
  {
    name: "the replay's engine wording: this engine's message for each V8 one is accepted, and nothing else",
    run() {
      for (const recorded of V8_MESSAGES) {
        const reproduced = reproduce(recorded);
        assert.ok(reproduced.length > 0, `no operation reproduces ${JSON.stringify(recorded)}`);
        for (const r of reproduced) {
          assert.equal(r.name, 'TypeError', r.what);
          // On V8 each operation reproduces the recorded text itself.
          if (!onJavaScriptCore) assert.equal(r.message, recorded, r.what);
          assert.ok(engineWorded(recorded, r.message, 'TypeError'), `${r.what}: ${r.message}`);
          assert.equal(engineWorded(recorded, `${r.message} (changed)`, 'TypeError'), null);
          assert.equal(engineWorded(recorded, r.message, 'RangeError'), null);
        }
      }
      assert.deepEqual(reproduce('UNIQUE constraint failed: t.x'), []);
      for (const [recorded, actual] of JAVASCRIPTCORE_PAIRS) {
        // JavaScriptCore words these so; V8 accepts only the recorded text.
        assert.equal(Boolean(engineWorded(recorded, actual, 'TypeError')), onJavaScriptCore, actual);
      }
    },
  },
];
