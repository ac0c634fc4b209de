// Public API of triflux-native-store/v8: the triflux hub store of schema "8". Its types
// are those of schema 7 (v7.d.ts); what changed is behaviour: an `active` role without a
// holder is refused (SqliteError SQLITE_CONSTRAINT_CHECK or SQLITE_CONSTRAINT_TRIGGER),
// and recoverRoleRegistry resets one an older file holds.
export * from './v7.js';
