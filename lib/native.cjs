'use strict';
// Finds and loads the native binary, on first use rather than at import: a hub whose
// platform has no binary must still be able to import this package and fall back
// (createStore throws inside its try/catch, as it did when better-sqlite3 was missing).
// The binding's functions are copied onto this module's exports by load(), so the
// other lib/ files call `native.facadeRun(...)` as plain properties (no proxy on the
// hot path); every way in (createStore, new Database, uuidv7) calls load() first.

const { constants: bufferConstants } = require('node:buffer');
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { name: PACKAGE, version: VERSION } = require('../package.json');
const { wireDifference } = require('./protocol.cjs');

const BINARY_NAME = 'triflux-native-store';
/** Env variables that name a .node file to load instead of the platform package. */
const OVERRIDES = ['TRIFLUX_NATIVE_STORE_BINARY', 'NAPI_RS_NATIVE_LIBRARY_PATH'];

let binding = null;
let failure = null;
let loadedFrom = null;
let loadedTriple = null;
const hooks = [];

/** glibc or musl, decided without trusting process.report alone (napi-rs's order). */
function isMusl() {
  try {
    // ldd is a shell script on glibc and a link to the musl loader on musl.
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl');
  } catch {}
  if (typeof process.report?.getReport === 'function') {
    // getReport resolves host names unless told not to: minutes on hosts with slow DNS.
    process.report.excludeNetwork = true;
    const report = process.report.getReport();
    if (report?.header?.glibcVersionRuntime) return false;
    const shared = report?.sharedObjects;
    if (Array.isArray(shared) && shared.some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))) return true;
  }
  try {
    return require('node:child_process').execSync('ldd --version 2>&1', { encoding: 'utf8' }).includes('musl');
  } catch {
    return false;
  }
}

/** napi-rs's name for this platform: linux-x64-gnu, linux-arm64-musl, darwin-arm64, win32-x64-msvc… */
function hostTriple() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** Where the binary may be, in order: the env override, a local build, the platform package. */
function candidates(triple) {
  for (const key of OVERRIDES) {
    // An override is taken alone: falling back behind the user's back hides mistakes.
    if (process.env[key]) return [{ label: `${key}=${process.env[key]}`, path: resolve(process.env[key]), override: key }];
  }
  const packageName = `${PACKAGE}-${triple}`;
  return [
    { label: `./${BINARY_NAME}.${triple}.node (local build)`, path: join(__dirname, '..', `${BINARY_NAME}.${triple}.node`), local: true },
    { label: `${packageName} (platform package)`, path: packageName, packageName },
  ];
}

function tryLoad(candidate) {
  // require() runs any other file name as JavaScript ("Unexpected identifier").
  if (candidate.override && !candidate.path.endsWith('.node')) {
    throw new Error(`${candidate.path} is not a native binary (a .node file)`);
  }
  if (candidate.packageName) {
    // A platform package of another release may not have the functions this JS calls.
    const { version } = require(`${candidate.packageName}/package.json`);
    if (version !== VERSION) {
      throw new Error(`version ${version} installed, ${PACKAGE} ${VERSION} needs the same version`);
    }
  }
  return require(candidate.path);
}

/** The binding, loaded once; throws the same descriptive Error on every call if it cannot load. */
function load() {
  if (binding !== null) return binding;
  if (failure !== null) throw failure;
  const triple = hostTriple();
  const tried = [];
  for (const candidate of candidates(triple)) {
    let loaded;
    try {
      loaded = tryLoad(candidate);
    } catch (error) {
      // A local build that is simply absent is the normal case for installed packages.
      if (candidate.local && error.code === 'MODULE_NOT_FOUND') continue;
      tried.push({ candidate, error });
      continue;
    }
    // A binary built from other sources numbers the wire otherwise (lib/protocol.cjs).
    const differs = typeof loaded.protocol === 'function' ? wireDifference(loaded.protocol()) : 'no protocol()';
    if (differs !== null) {
      tried.push({ candidate, error: new Error(`built from other sources than this JS layer (its wire differs: ${differs})`) });
      continue;
    }
    // Own names, enumerable or not (napi-rs may define classes non-enumerable), and the
    // statement calls that take their arguments as passed (src/lib.rs), as plain data
    // properties. They are defined in one call: added one by one, ~40 properties turn
    // this object into a V8 dictionary, and every `native.x` read into a hash lookup.
    const functions = loaded.nativeFunctions();
    const descriptors = {};
    for (const source of [loaded, functions]) {
      for (const key of Object.getOwnPropertyNames(source)) {
        descriptors[key] = { value: source[key], writable: true, enumerable: true, configurable: true };
      }
    }
    Object.defineProperties(module.exports, descriptors);
    // Every connection limits its values to what this engine's strings and Buffers hold.
    loaded.setValueLimits(bufferConstants.MAX_STRING_LENGTH, bufferConstants.MAX_LENGTH);
    binding = loaded;
    loadedFrom = candidate.packageName ? require.resolve(candidate.packageName) : candidate.path;
    loadedTriple = triple;
    for (const hook of hooks.splice(0)) hook(loaded);
    return binding;
  }
  const packageName = `${PACKAGE}-${triple}`;
  const override = tried.find(({ candidate }) => candidate.override)?.candidate.override;
  const remedy = override
    ? `${override} is set, so only the file it names was tried: point it at a ${BINARY_NAME}.${triple}.node file, or unset it.\n`
    : `or set TRIFLUX_NATIVE_STORE_BINARY to a ${BINARY_NAME}.${triple}.node file.\n`;
  failure = new Error(
    `${PACKAGE}: cannot load the native binary for ${triple}: the package ${packageName} ` +
      `should provide it. Install it (npm installs it as an optional dependency of ${PACKAGE}; ` +
      `reinstall without --omit=optional and with a lockfile made on this platform)${override ? '. ' : ', '}` +
      remedy +
      tried.map(({ candidate, error }) => `  ${candidate.label}: ${error.message.split('\n')[0]}`).join('\n'),
    { cause: tried.at(-1)?.error },
  );
  failure.code = 'ERR_TRIFLUX_NATIVE_BINARY';
  failure.triple = triple;
  failure.packageName = packageName;
  throw failure;
}

/** Runs `fn(binding)` once the binding is loaded (at once if it already is). */
function onLoad(fn) {
  if (binding !== null) fn(binding);
  else hooks.push(fn);
}

/**
 * A native connection (`new NativeDb(...args)`) whose `handle` is a plain number: the
 * class's getter is a native call, and every statement call passes the handle, which
 * never changes.
 */
function connect(...args) {
  const n = new (load().NativeDb)(...args);
  Object.defineProperty(n, 'handle', { value: n.handle });
  return n;
}

/** Where the loaded binding came from and which triple it was chosen for. */
function loadedInfo() {
  load();
  return { binary: loadedFrom, target: loadedTriple };
}

module.exports = { load, onLoad, connect, loadedInfo, hostTriple, isMusl, PACKAGE, VERSION };
