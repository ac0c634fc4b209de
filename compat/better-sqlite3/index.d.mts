export { default, SqliteError } from 'triflux-native-store/better-sqlite3';
