// ESM view of better-sqlite3.cjs: `import Database from ...` as with better-sqlite3.
import Database from './better-sqlite3.cjs';

export const { SqliteError } = Database;
export default Database;
