'use strict';
// triflux-native-store/v8: the store of the hub releases with schema "8" (lib/entry.cjs).

module.exports = require('./lib/entry.cjs').entryOf(8);
