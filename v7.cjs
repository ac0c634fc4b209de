'use strict';
// triflux-native-store/v7: the store of the hub releases with schema "7" (lib/entry.cjs).

module.exports = require('./lib/entry.cjs').entryOf(7);
