// ESM entry of triflux-native-store/v7: the same module as the CommonJS one.
import native from './v7.cjs';

export const { createStore, uuidv7, importBetterSqlite3, version, readStats, checkpointStatus, Database, SqliteError } = native;
export default native;
