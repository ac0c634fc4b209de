// A reader for the export and import tables of a 64-bit PE file (node.exe, a Windows
// .node addon): the N-API functions node.exe exports (to make an import library the
// Windows test build links against) and the DLLs an addon needs at load time.

function sections(buf, pe) {
  const count = buf.readUInt16LE(pe + 6);
  const optionalSize = buf.readUInt16LE(pe + 20);
  const first = pe + 24 + optionalSize;
  return Array.from({ length: count }, (_, i) => {
    const at = first + i * 40;
    return {
      va: buf.readUInt32LE(at + 12),
      size: Math.max(buf.readUInt32LE(at + 8), buf.readUInt32LE(at + 16)),
      raw: buf.readUInt32LE(at + 20),
    };
  });
}

/** The header facts and a relative-virtual-address-to-file-offset mapper. */
function open(buf) {
  if (buf.readUInt16LE(0) !== 0x5a4d) throw new Error('not a PE file (no MZ header)');
  const pe = buf.readUInt32LE(0x3c);
  if (buf.readUInt32LE(pe) !== 0x4550) throw new Error('not a PE file (no PE signature)');
  const optional = pe + 24;
  if (buf.readUInt16LE(optional) !== 0x20b) throw new Error('not a 64-bit (PE32+) file');
  const table = sections(buf, pe);
  const offset = (rva) => {
    const s = table.find((x) => rva >= x.va && rva < x.va + x.size);
    if (!s) throw new Error(`address 0x${rva.toString(16)} is in no section`);
    return rva - s.va + s.raw;
  };
  const directory = (index) => ({ rva: buf.readUInt32LE(optional + 112 + index * 8), size: buf.readUInt32LE(optional + 116 + index * 8) });
  const machine = { 0x8664: 'x64', 0xaa64: 'arm64' }[buf.readUInt16LE(pe + 4)] ?? `machine 0x${buf.readUInt16LE(pe + 4).toString(16)}`;
  const dll = (buf.readUInt16LE(pe + 22) & 0x2000) !== 0;
  return { offset, directory, machine, dll };
}

const cString = (buf, at) => buf.toString('latin1', at, buf.indexOf(0, at));

/** The names a PE file exports. */
export function peExports(buf) {
  const { offset, directory } = open(buf);
  const dir = directory(0);
  if (dir.rva === 0) return [];
  const at = offset(dir.rva);
  const count = buf.readUInt32LE(at + 24);
  const names = offset(buf.readUInt32LE(at + 32));
  return Array.from({ length: count }, (_, i) => cString(buf, offset(buf.readUInt32LE(names + i * 4))));
}

/** CPU, whether it is a DLL, and the DLLs it imports at load time. */
export function peInfo(buf) {
  const { offset, directory, machine, dll } = open(buf);
  const dir = directory(1);
  const imports = [];
  if (dir.rva !== 0) {
    for (let at = offset(dir.rva); buf.readUInt32LE(at + 12) !== 0; at += 20) imports.push(cString(buf, offset(buf.readUInt32LE(at + 12))));
  }
  return { machine, dll, imports, exports: peExports(buf) };
}
