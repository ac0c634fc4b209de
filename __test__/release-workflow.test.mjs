// The release workflow only runs on GitHub; here it is parsed and its structure checked:
// every target built and uploaded, tests on Linux (glibc and musl), macOS and Windows for
// Node 20/22/24/26, publishing only on a version tag and only after every test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

import { targets } from '../tools/targets.mjs';
import { repoRoot } from './helpers.mjs';

const text = readFileSync(join(repoRoot, '.github/workflows/release.yml'), 'utf8');
const workflow = parse(text, { strict: true, uniqueKeys: true });
const { build, test: testJob, publish } = workflow.jobs;
const steps = (job) => job.steps.map((s) => `${s.uses ?? ''} ${s.run ?? ''}`).join('\n');

test('it parses, triggers on version tags, and has build, test and publish jobs', () => {
  assert.deepEqual(workflow.on.push.tags, ['v*']);
  assert.deepEqual(Object.keys(workflow.jobs), ['build', 'test', 'publish']);
  for (const job of Object.values(workflow.jobs)) {
    assert.ok(job['runs-on'] && Array.isArray(job.steps) && job.steps.length > 0);
    for (const step of job.steps) assert.ok(step.uses || step.run, JSON.stringify(step));
  }
});

test('build: one matrix entry per napi target, uploading exactly that binary', () => {
  const entries = build.strategy.matrix.include;
  assert.deepEqual(entries.map((e) => e.target).sort(), targets.map((t) => t.rust).sort());
  for (const entry of entries) {
    const t = targets.find((x) => x.rust === entry.target);
    assert.equal(entry.triple, t.dir);
    const os = t.os === 'linux' ? 'ubuntu' : t.os === 'darwin' ? 'macos' : 'windows';
    assert.ok(entry.host.startsWith(os), `${entry.target} builds on ${entry.host}`);
  }
  const upload = build.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'));
  assert.equal(upload.with.name, 'bindings-${{ matrix.triple }}');
  assert.equal(upload.with.path, 'npm/${{ matrix.triple }}/triflux-native-store.${{ matrix.triple }}.node');
  assert.equal(upload.with['if-no-files-found'], 'error');
  // Linux goes through the same command as here (zig, glibc 2.17).
  assert.match(steps(build), /npm run build:linux -- \$\{\{ matrix\.target \}\}/);
});

test('build: macOS binaries get an @rpath install name and macOS 11 on arm64, and pass the Mach-O checks before upload', () => {
  const run = steps(build);
  assert.match(run, /-install_name,@rpath\/triflux-native-store\.\$\{\{ matrix\.triple \}\}\.node/);
  assert.match(run, /aarch64-apple-darwin.*MACOSX_DEPLOYMENT_TARGET=11\.0/);
  assert.match(run, /--remap-path-prefix=\$\{\{ github\.workspace \}\}=\./);
  const names = build.steps.map((s) => s.name ?? s.uses);
  const check = build.steps.find((s) => s.run?.startsWith('node tools/check-cross.mjs'));
  assert.equal(check.if, "runner.os == 'macOS'");
  assert.ok(names.indexOf(check.name) < names.findIndex((n) => n.startsWith('actions/upload-artifact@')));
});

test('test: every built binary on its own OS and libc, for Node 20, 22, 24 and 26', () => {
  assert.deepEqual(testJob.needs, 'build');
  const { node, settings } = testJob.strategy.matrix;
  assert.deepEqual(node, ['20', '22', '24', '26']);
  assert.deepEqual(settings.map((s) => s.triple).sort(), targets.map((t) => t.dir).sort());
  for (const s of settings) {
    const t = targets.find((x) => x.dir === s.triple);
    const runner = t.os === 'linux' ? /^ubuntu/ : t.os === 'darwin' ? /^macos/ : /^windows/;
    assert.match(s.host, runner, s.triple);
    // arm64 binaries run on arm64 runners, x64 on x64 ones (no emulation).
    assert.equal(/arm/.test(s.host) || (t.os === 'darwin' && s.host === 'macos-latest'), t.cpu === 'arm64', s.triple);
    assert.equal(Boolean(s.alpine), t.libc === 'musl', s.triple);
  }
  const download = testJob.steps.find((s) => s.uses?.startsWith('actions/download-artifact@'));
  assert.equal(download.with.name, 'bindings-${{ matrix.settings.triple }}');
  assert.match(steps(testJob), /node --test __test__\/\*\.test\.mjs/);
  assert.match(steps(testJob), /node:\$\{\{ matrix\.node \}\}-alpine/);
});

test('publish: only on a v* tag, after every build and test, from the collected npm/ packages', () => {
  assert.equal(publish.if, "startsWith(github.ref, 'refs/tags/v')");
  assert.deepEqual(publish.needs, ['build', 'test']);
  assert.equal(publish.permissions['id-token'], 'write');
  const run = steps(publish);
  const order = ['actions/download-artifact@', 'napi artifacts', 'npm publish --', 'npm publish ./compat/better-sqlite3'].map((s) => run.indexOf(s));
  assert.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])), `order ${order}`);
  assert.match(run, /GITHUB_REF_NAME/, 'the tag must equal the package version');
  for (const step of publish.steps.filter((s) => s.run?.startsWith('npm publish'))) {
    assert.equal(step.env.NODE_AUTH_TOKEN, '${{ secrets.NPM_TOKEN }}');
  }
});
