'use strict';
// Installed under the name better-sqlite3 (an npm alias), this is what
// `require('better-sqlite3')` returns: triflux-native-store's Database.
module.exports = require('triflux-native-store/better-sqlite3');
