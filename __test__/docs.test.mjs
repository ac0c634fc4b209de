// Keeps the docs true: every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md,
// bench/README.md and docs/ resolves (the file, and the #anchor to one of its headings);
// every `npm run X` (and `npm start`/`npm test`) they name is a script of package.json;
// every repository path they name in backticks or in a code block exists. The checker is
// tried on a small document with one mistake of each kind first, so that it can fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;

/** Paths the docs may name that a fresh clone does not hold (git-ignored, made by builds and tools). */
const GENERATED = ['.tools', 'target', 'node_modules', 'demo/data', '.git'];
const isGenerated = (rel) => GENERATED.some((g) => rel === g || rel.startsWith(`${g}/`));

/** The repository's top-level entries: a token is a path of this repository when it starts with one. */
const topLevel = new Set(readdirSync(root).filter((name) => !isGenerated(name)));

function docFiles() {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'bench/README.md'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return files;
}

/** The text split into prose (code blocks blanked, so lines keep their numbers) and code blocks. */
function split(text) {
  const prose = [];
  const code = [];
  let fence = null;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length) fence = null;
      else code.push(line);
      prose.push('');
    } else if (marker) {
      fence = marker[1];
      prose.push('');
    } else {
      prose.push(line);
    }
  }
  return { prose: prose.join('\n'), code: code.join('\n') };
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a markdown text, duplicates numbered as GitHub numbers them. */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const line of split(text).prose.split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * Problems of one document: `read(rel)` gives another document's text, or null when it
 * does not exist. `found` counts the relative links and repository paths checked.
 */
function check(file, text, { read, exists, scriptNames }, found = { links: 0, paths: 0 }) {
  const problems = [];
  const { prose, code } = split(text);
  const spans = [...prose.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)].map((m) => m[2]);
  const proseWithoutSpans = prose.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, '');

  // Links: inline [text](target) and reference definitions [name]: target.
  const targets = [
    ...[...proseWithoutSpans.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
    ...[...proseWithoutSpans.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]),
  ];
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    found.links += 1;
    const [pathPart, anchor] = target.split('#');
    const rel = pathPart === '' ? file : relative(root, resolve(root, dirname(file), decodeURIComponent(pathPart))).split('\\').join('/');
    if (rel.startsWith('..')) {
      problems.push(`${file}: link ${target} leaves the repository`);
      continue;
    }
    if (!exists(rel)) {
      problems.push(`${file}: link ${target}: no such file ${rel}`);
      continue;
    }
    if (anchor !== undefined) {
      const other = rel === file ? text : rel.endsWith('.md') ? read(rel) : null;
      if (other === null) problems.push(`${file}: link ${target}: an anchor into a file that is not markdown`);
      else if (!anchors(other).has(anchor)) problems.push(`${file}: link ${target}: no heading #${anchor} in ${rel}`);
    }
  }

  // npm scripts, in prose and code alike.
  for (const m of `${prose}\n${code}`.matchAll(/\bnpm (?:run(?:-script)? ([\w:.-]+)|(start|test)\b)/g)) {
    const name = m[1] ?? m[2];
    if (!scriptNames.has(name)) problems.push(`${file}: npm script "${name}" is not in package.json`);
  }

  // Repository paths: tokens of code spans and code blocks that start with a top-level entry.
  const tokens = [...spans, code].flatMap((s) => s.split(/[\s"'=,;()]+/));
  for (let token of tokens) {
    token = token.replace(/^\.\//, '').replace(/[.:]+$/, '');
    if (!token || /[<>*…{}$|[\]\\]|:\/\/|^-/.test(token)) continue;
    const first = token.split('/')[0];
    if (!topLevel.has(first) || (first === token && !topLevel.has(token))) continue;
    const rel = token.replace(/\/$/, '');
    if (isGenerated(rel)) continue;
    found.paths += 1;
    if (!exists(rel)) problems.push(`${file}: names ${token}, which is not in the repository`);
  }
  return problems;
}

const onDisk = {
  exists: (rel) => existsSync(join(root, rel)),
  read: (rel) => (existsSync(join(root, rel)) ? readFileSync(join(root, rel), 'utf8') : null),
  scriptNames: new Set(Object.keys(scripts)),
};

test('the checker: GitHub anchors, and one mistake of each kind found', () => {
  assert.equal(slug('store.db and Database'), 'storedb-and-database');
  assert.equal(slug('Platforms, releases and CI'), 'platforms-releases-and-ci');
  assert.equal(slug('`readStats`'), 'readstats');
  assert.deepEqual([...anchors('# A\n## A\n```sh\n# not a heading\n```\n### B: c (`d.e`)\n')], ['a', 'a-1', 'b-c-de']);

  const doc = [
    '# Title',
    'See [the API](docs/api.md#the-store), [here](#title) and [home](https://example.org).',
    'Broken: [gone](docs/no-such-page.md), [anchor](docs/api.md#no-such-heading), [self](#nope).',
    'Run `npm run build` and `npm run no-such-script`; read `tools/trace-replay.mjs` and `tools/no-such-file.mjs`.',
    'Not paths: `hub/store.mjs`, `npm/<triple>/`, `.tools/node/`, `[x](#nope-in-code)`.',
    '```sh',
    'node bench/no-such-bench.mjs   # npm test',
    '```',
  ].join('\n');
  const problems = check('README.md', doc, onDisk);
  assert.deepEqual(problems, [
    'README.md: link docs/no-such-page.md: no such file docs/no-such-page.md',
    'README.md: link docs/api.md#no-such-heading: no heading #no-such-heading in docs/api.md',
    'README.md: link #nope: no heading #nope in README.md',
    'README.md: npm script "no-such-script" is not in package.json',
    'README.md: names tools/no-such-file.mjs, which is not in the repository',
    'README.md: names bench/no-such-bench.mjs, which is not in the repository',
  ]);
});

test('the docs: the pages exist and README stays a front door', () => {
  const files = docFiles();
  for (const page of ['hub', 'api', 'cli', 'performance', 'platforms', 'compatibility', 'architecture']) {
    assert.ok(files.includes(`docs/${page}.md`), `docs/${page}.md exists`);
  }
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 250, `README.md has ${readme.split('\n').length} lines (at most 250)`);
  for (const page of files.filter((f) => f.startsWith('docs/'))) {
    assert.ok(readme.includes(`](${page}`), `README.md links ${page}`);
  }
});

test('the docs: every link, npm script and repository path they name exists', () => {
  const found = { links: 0, paths: 0 };
  const problems = [];
  for (const file of docFiles()) {
    problems.push(...check(file, readFileSync(join(root, file), 'utf8'), onDisk, found));
  }
  assert.ok(found.links >= 50, `the docs hold relative links to check (${found.links})`);
  assert.ok(found.paths >= 100, `the docs name repository paths to check (${found.paths})`);
  assert.deepEqual(problems, []);
});
