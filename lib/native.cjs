'use strict';
// Loads the platform's native binary (see README "Swapping it into the hub").

const { join } = require('node:path');

function loadNative() {
  const { platform, arch } = process;
  let abi = '';
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    abi = report && report.header && report.header.glibcVersionRuntime ? '-gnu' : '-musl';
  } else if (platform === 'win32') {
    abi = '-msvc';
  }
  const triple = `${platform}-${arch}${abi}`;
  const candidates = [
    join(__dirname, '..', `triflux-native-store.${triple}.node`),
    `triflux-native-store-${triple}`,
  ];
  const errors = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (error) {
      errors.push(`${candidate}: ${error.message}`);
    }
  }
  throw new Error(`triflux-native-store: no native binary for ${triple}.\n${errors.join('\n')}`);
}

module.exports = loadNative();
