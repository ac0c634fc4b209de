// `import Database from 'triflux-native-store/better-sqlite3'`: better-sqlite3's shape.
import { Database, SqliteError } from './index.js';

export default Database;
export { SqliteError };
