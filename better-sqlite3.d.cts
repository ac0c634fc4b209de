// `require('triflux-native-store/better-sqlite3')`: the Database class itself, as
// better-sqlite3's `module.exports = Database`.
import { Database as DatabaseClass } from './index.js';

declare const Database: typeof DatabaseClass;
export = Database;
