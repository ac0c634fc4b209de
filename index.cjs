'use strict';
// triflux-native-store: the store of the hub releases with schema "6" (also `/v6`);
// `/v7` and `/v8` are the later ones (lib/entry.cjs).

module.exports = require('./lib/entry.cjs').entryOf(6);
