// CommonJS consumers: require() of the main entry and of the better-sqlite3 subpath.
import store = require('triflux-native-store');
import Database = require('triflux-native-store/better-sqlite3');

const s: store.Store = store.createStore('/tmp/x.db');
const db: store.Database = new Database(':memory:', { readonly: false });
const err: store.SqliteError = new Database.SqliteError('m', 'SQLITE_ERROR');
void s;
void db;
void err;
