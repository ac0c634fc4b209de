// An npm registry on 127.0.0.1 that serves a folder of packed tarballs and nothing else:
// the Bun and Deno lanes install the package with the runtime's own installer from it,
// as a user installs it from npmjs.com (neither installs a tarball file the way npm does;
// Deno links a `file:` tarball instead of unpacking it). Each tarball's package.json
// becomes its version's manifest; any other name is a 404.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

/** The packages in `dir`'s tarballs: name -> { manifest, file, data }. */
function readTarballs(dir) {
  const packages = new Map();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
    const data = readFileSync(join(dir, file));
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(dir, file), 'package/package.json'], { encoding: 'utf8' }));
    if (packages.has(manifest.name)) throw new Error(`registry: two tarballs of ${manifest.name} in ${dir}`);
    packages.set(manifest.name, { manifest, file, data });
  }
  return packages;
}

/** The registry document of one package: its one version, with the tarball's URL and digests. */
function packument(base, name, { manifest, file, data }) {
  const dist = {
    tarball: `${base}/${name}/-/${file}`,
    shasum: createHash('sha1').update(data).digest('hex'),
    integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
  };
  return { name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: { ...manifest, dist } } };
}

/**
 * Serves the tarballs in `dir` until close(). Returns { url, requests, close } where
 * `requests` lists every path asked for, in order.
 */
export async function startRegistry(dir) {
  const packages = readTarballs(dir);
  const requests = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://registry').pathname).slice(1);
    requests.push(path);
    const send = (status, type, body) => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    };
    const tarball = /^(?<name>.+)\/-\/(?<file>[^/]+\.tgz)$/.exec(path)?.groups;
    if (tarball) {
      const pkg = packages.get(tarball.name);
      if (pkg?.file === tarball.file) return send(200, 'application/octet-stream', pkg.data);
    } else if (packages.has(path)) {
      return send(200, 'application/json', JSON.stringify(packument(base, path, packages.get(path))));
    }
    return send(404, 'application/json', JSON.stringify({ error: 'not found' }));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: `${base}/`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
