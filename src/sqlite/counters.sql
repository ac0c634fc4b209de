-- Row counts of the two tables that grow without bound (messages, dead_letters), for
-- getHubStats, getAuditStats and getQueueDepths: the original's COUNT(*) walks a whole
-- index. Connection-local (TEMP): nothing is added to the file's schema and no WAL page is
-- written. The triggers count this connection's writes (store methods and store.db alike,
-- rolled back with their transaction); src/store/scale.rs recounts (this script again)
-- whenever PRAGMA data_version says another connection committed, or the schema changed.
-- Exact under SQLite's default recursive_triggers=OFF:
-- * messages: +1 after an insert, -1 after a delete (the store never replaces a message);
-- * dead_letters: +1 before an insert of a message_id not yet there, because
--   moveToDeadLetter and sweepExpired use INSERT OR REPLACE, whose implicit delete fires
--   no trigger.
CREATE TEMP TABLE IF NOT EXISTS store_counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_insert AFTER INSERT ON main.messages
BEGIN
  UPDATE temp.store_counts SET n = n + 1 WHERE name = 'messages';
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_delete AFTER DELETE ON main.messages
BEGIN
  UPDATE temp.store_counts SET n = n - 1 WHERE name = 'messages';
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_dead_letters_insert BEFORE INSERT ON main.dead_letters
WHEN NOT EXISTS (SELECT 1 FROM main.dead_letters WHERE message_id = NEW.message_id)
BEGIN
  UPDATE temp.store_counts SET n = n + 1 WHERE name = 'dead_letters';
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_dead_letters_delete AFTER DELETE ON main.dead_letters
BEGIN
  UPDATE temp.store_counts SET n = n - 1 WHERE name = 'dead_letters';
END;
INSERT OR REPLACE INTO temp.store_counts (name, n) VALUES
  ('messages', (SELECT COUNT(*) FROM main.messages)),
  ('dead_letters', (SELECT COUNT(*) FROM main.dead_letters));
