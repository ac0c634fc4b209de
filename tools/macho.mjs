// A reader for the parts of a 64-bit Mach-O file that decide whether macOS will load it
// as a Node addon: CPU, install name, linked dylibs, minimum macOS, exported symbols and
// the ad-hoc code signature (arm64 macOS refuses code whose page hashes do not match).
// Written here so the darwin binaries can be checked on Linux with nothing installed.
import { createHash } from 'node:crypto';

const MH_MAGIC_64 = 0xfeedfacf;
const CPU = { 0x01000007: 'x64', 0x0100000c: 'arm64' };
const FILETYPE = { 6: 'dylib', 8: 'bundle' };

const LC = {
  SYMTAB: 0x2,
  LOAD_DYLIB: 0xc,
  ID_DYLIB: 0xd,
  CODE_SIGNATURE: 0x1d,
  LAZY_LOAD_DYLIB: 0x20,
  DYLD_INFO: 0x22,
  VERSION_MIN_MACOSX: 0x24,
  BUILD_VERSION: 0x32,
  LOAD_WEAK_DYLIB: 0x80000018,
  RPATH: 0x8000001c,
  REEXPORT_DYLIB: 0x8000001f,
  DYLD_INFO_ONLY: 0x80000022,
  LOAD_UPWARD_DYLIB: 0x80000023,
  DYLD_EXPORTS_TRIE: 0x80000033,
};
const DYLIB_LOADS = new Set([LC.LOAD_DYLIB, LC.LAZY_LOAD_DYLIB, LC.LOAD_WEAK_DYLIB, LC.REEXPORT_DYLIB, LC.LOAD_UPWARD_DYLIB]);
const PLATFORM_MACOS = 1;

/** X.Y.Z packed as xxxx.yy.zz nibbles, as Mach-O stores versions. */
function version(packed) {
  return `${packed >>> 16}.${(packed >>> 8) & 0xff}.${packed & 0xff}`.replace(/\.0$/, '');
}

function cString(buf, start, end) {
  const nul = buf.indexOf(0, start);
  return buf.toString('utf8', start, nul < 0 || nul > end ? end : nul);
}

function uleb(buf, state) {
  let result = 0;
  let shift = 0;
  for (;;) {
    const byte = buf[state.pos++];
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return result;
  }
}

/** Every name in an export trie (dyld's prefix tree of exported symbols). */
function trieNames(buf, start, size) {
  const names = [];
  const seen = new Set();
  const walk = (offset, prefix) => {
    if (offset >= size || seen.has(offset)) throw new Error('malformed export trie');
    seen.add(offset);
    const state = { pos: start + offset };
    const terminalSize = uleb(buf, state);
    if (terminalSize > 0) names.push(prefix);
    state.pos += terminalSize;
    const children = buf[state.pos++];
    for (let i = 0; i < children; i++) {
      const nul = buf.indexOf(0, state.pos);
      const edge = buf.toString('utf8', state.pos, nul);
      state.pos = nul + 1;
      const child = uleb(buf, state);
      const saved = state.pos;
      walk(child, prefix + edge);
      state.pos = saved;
    }
  };
  if (size > 0) walk(0, '');
  return names;
}

/** Checks an embedded code signature: each page's SHA-256 against the CodeDirectory. */
function verifySignature(buf, dataoff, datasize) {
  const blob = buf.subarray(dataoff, dataoff + datasize);
  if (blob.readUInt32BE(0) !== 0xfade0cc0) return { ok: false, why: 'no embedded signature SuperBlob' };
  const count = blob.readUInt32BE(8);
  for (let i = 0; i < count; i++) {
    const offset = blob.readUInt32BE(12 + i * 8 + 4);
    if (blob.readUInt32BE(offset) !== 0xfade0c02) continue;
    const cd = blob.subarray(offset);
    const hashOffset = cd.readUInt32BE(16);
    const nCodeSlots = cd.readUInt32BE(28);
    const codeLimit = cd.readUInt32BE(32);
    const hashSize = cd[36];
    const hashType = cd[37];
    const pageSize = 2 ** cd[39];
    if (hashType !== 2 || hashSize !== 32) return { ok: false, why: `hash type ${hashType} is not SHA-256` };
    if (codeLimit !== dataoff) return { ok: false, why: `signature covers ${codeLimit} bytes, code ends at ${dataoff}` };
    for (let page = 0; page < nCodeSlots; page++) {
      const from = page * pageSize;
      const hash = createHash('sha256').update(buf.subarray(from, Math.min(from + pageSize, codeLimit))).digest();
      if (!hash.equals(cd.subarray(hashOffset + page * 32, hashOffset + page * 32 + 32))) {
        return { ok: false, why: `page ${page} does not match its hash (changed after signing)` };
      }
    }
    return { ok: true, why: `${nCodeSlots} pages match` };
  }
  return { ok: false, why: 'no CodeDirectory in the signature' };
}

/** The facts of a thin 64-bit Mach-O file, from its header and load commands. */
export function readMachO(buf) {
  if (buf.length < 32 || buf.readUInt32LE(0) !== MH_MAGIC_64) throw new Error('not a thin 64-bit little-endian Mach-O file');
  const info = {
    cpu: CPU[buf.readUInt32LE(4)] ?? `cputype 0x${buf.readUInt32LE(4).toString(16)}`,
    filetype: FILETYPE[buf.readUInt32LE(12)] ?? `filetype ${buf.readUInt32LE(12)}`,
    installName: null,
    dylibs: [],
    rpaths: [],
    minMacOS: null,
    sdk: null,
    exports: [],
    symbols: 0,
    signature: null,
  };
  const ncmds = buf.readUInt32LE(16);
  let at = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(at);
    const size = buf.readUInt32LE(at + 4);
    const end = at + size;
    if (cmd === LC.ID_DYLIB) info.installName = cString(buf, at + buf.readUInt32LE(at + 8), end);
    else if (DYLIB_LOADS.has(cmd)) info.dylibs.push(cString(buf, at + buf.readUInt32LE(at + 8), end));
    else if (cmd === LC.RPATH) info.rpaths.push(cString(buf, at + buf.readUInt32LE(at + 8), end));
    else if (cmd === LC.BUILD_VERSION && buf.readUInt32LE(at + 8) === PLATFORM_MACOS) {
      info.minMacOS = version(buf.readUInt32LE(at + 12));
      info.sdk = version(buf.readUInt32LE(at + 16));
    } else if (cmd === LC.VERSION_MIN_MACOSX) {
      info.minMacOS = version(buf.readUInt32LE(at + 8));
      info.sdk = version(buf.readUInt32LE(at + 12));
    } else if (cmd === LC.DYLD_INFO || cmd === LC.DYLD_INFO_ONLY) {
      info.exports.push(...trieNames(buf, buf.readUInt32LE(at + 40), buf.readUInt32LE(at + 44)));
    } else if (cmd === LC.DYLD_EXPORTS_TRIE) {
      info.exports.push(...trieNames(buf, buf.readUInt32LE(at + 8), buf.readUInt32LE(at + 12)));
    } else if (cmd === LC.SYMTAB) info.symbols = buf.readUInt32LE(at + 12);
    else if (cmd === LC.CODE_SIGNATURE) info.signature = verifySignature(buf, buf.readUInt32LE(at + 8), buf.readUInt32LE(at + 12));
    at = end;
  }
  return info;
}
