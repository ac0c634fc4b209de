// ESM entry: the same module as the CommonJS one.
import native from './index.cjs';

export const { createStore, uuidv7, importBetterSqlite3, version, readStats, checkpointStatus, Database, SqliteError } = native;
export default native;
