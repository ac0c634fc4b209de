// `import Database from 'better-sqlite3'` under the npm alias.
export { default, SqliteError } from 'triflux-native-store/better-sqlite3';
