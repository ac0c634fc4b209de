import Database = require('triflux-native-store/better-sqlite3');
export = Database;
