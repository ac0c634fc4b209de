// The wire's numbers in lib/protocol.cjs are written by this tool from the built binary's
// `protocol()` (src/engine/js/protocol.rs, where they are defined): run it after changing
// them there. `--check` only says whether the file is current (the tests check the same,
// and a binary whose wire differs from the JS layer's refuses to load).
//
//   node tools/protocol.mjs [--check]

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { hostTriple } = require('../lib/native.cjs');
const FILE = fileURLToPath(new URL('../lib/protocol.cjs', import.meta.url));
const BEGIN = '// BEGIN WIRE';
const END = '// END WIRE';

const binary = require(fileURLToPath(new URL(`../triflux-native-store.${hostTriple()}.node`, import.meta.url)));
const wire = binary.protocol();
const block = [
  `${BEGIN} (written by tools/protocol.mjs from src/engine/js/protocol.rs)`,
  'const WIRE = Object.freeze({',
  ...Object.entries(wire).map(([name, value]) => `  ${name}: ${value},`),
  '});',
  END,
].join('\n');

const text = readFileSync(FILE, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start < 0 || end < start) throw new Error(`lib/protocol.cjs has no ${BEGIN} … ${END} block`);
const updated = text.slice(0, start) + block + text.slice(end + END.length);
if (process.argv.includes('--check')) {
  if (updated !== text) {
    console.error('lib/protocol.cjs differs from the binary\'s wire: run node tools/protocol.mjs');
    process.exit(1);
  }
  console.log('lib/protocol.cjs matches the binary\'s wire');
} else {
  writeFileSync(FILE, updated);
  console.log(`lib/protocol.cjs: ${Object.keys(wire).length} numbers`);
}
