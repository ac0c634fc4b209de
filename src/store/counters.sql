-- Counts that getHubStats, getAuditStats and getQueueDepths would otherwise take with a
-- COUNT(*) walking an index: all messages, queued messages by priority (>= 7 and < 7),
-- dead letters, and assign jobs by status (the four statuses the statistics report).
-- Connection-local (TEMP): nothing is added to the file's schema and no WAL page is
-- written. The triggers count this connection's writes (store methods and store.db alike,
-- rolled back with their transaction, the stored versions below included). Running this
-- script again recounts everything; src/store/scale.rs does so when the live
-- data_version/schema_version differ from the ones stored at the last count (another
-- connection committed, or the schema changed) or when `stale` is set.
-- Exact under SQLite's default recursive_triggers=OFF, where a REPLACE's implicit delete
-- fires no trigger:
-- * dead_letters: +1 before an insert of a message_id not yet there (moveToDeadLetter and
--   sweepExpired use INSERT OR REPLACE; an ignored or replacing insert adds nothing);
-- * messages and assign_jobs: the store never replaces a row of them; a raw insert that
--   meets an existing id or rowid (REPLACE, IGNORE, an upsert) or an update that changes
--   either sets `stale`, and the next statistics call recounts (a UNIQUE index added to
--   them through raw SQL would be a conflict this does not see).
-- The increments repeat the original's predicates on the row (status='queued' AND
-- priority >= 7, resp. < 7; status = '…'), so a row counts where the original's COUNT(*)
-- would find it (iif: a NULL comparison counts as false, as in a WHERE).
-- One row, so a trigger updates one row in place and a statistic reads one row.
CREATE TEMP TABLE IF NOT EXISTS store_counts (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  messages INTEGER NOT NULL,
  urgent INTEGER NOT NULL,
  normal INTEGER NOT NULL,
  dead_letters INTEGER NOT NULL,
  assign_queued INTEGER NOT NULL,
  assign_running INTEGER NOT NULL,
  assign_failed INTEGER NOT NULL,
  assign_timed_out INTEGER NOT NULL,
  stale INTEGER NOT NULL,
  data_version INTEGER,
  schema_version INTEGER
);

CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_insert AFTER INSERT ON main.messages
BEGIN
  UPDATE temp.store_counts SET messages = messages + 1,
    urgent = urgent + iif(NEW.status = 'queued' AND NEW.priority >= 7, 1, 0),
    normal = normal + iif(NEW.status = 'queued' AND NEW.priority < 7, 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_delete AFTER DELETE ON main.messages
BEGIN
  UPDATE temp.store_counts SET messages = messages - 1,
    urgent = urgent - iif(OLD.status = 'queued' AND OLD.priority >= 7, 1, 0),
    normal = normal - iif(OLD.status = 'queued' AND OLD.priority < 7, 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_queue AFTER UPDATE OF status, priority ON main.messages
WHEN OLD.status = 'queued' OR NEW.status = 'queued'
BEGIN
  UPDATE temp.store_counts SET
    urgent = urgent - iif(OLD.status = 'queued' AND OLD.priority >= 7, 1, 0) + iif(NEW.status = 'queued' AND NEW.priority >= 7, 1, 0),
    normal = normal - iif(OLD.status = 'queued' AND OLD.priority < 7, 1, 0) + iif(NEW.status = 'queued' AND NEW.priority < 7, 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_conflict BEFORE INSERT ON main.messages
WHEN EXISTS (SELECT 1 FROM main.messages WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM main.messages WHERE rowid = NEW.rowid)
BEGIN
  UPDATE temp.store_counts SET stale = 1;
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_messages_rekey AFTER UPDATE ON main.messages
WHEN NEW.id IS NOT OLD.id OR NEW.rowid IS NOT OLD.rowid
BEGIN
  UPDATE temp.store_counts SET stale = 1;
END;

CREATE TEMP TRIGGER IF NOT EXISTS store_counts_dead_letters_insert BEFORE INSERT ON main.dead_letters
WHEN NOT EXISTS (SELECT 1 FROM main.dead_letters WHERE message_id = NEW.message_id)
BEGIN
  UPDATE temp.store_counts SET dead_letters = dead_letters + 1;
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_dead_letters_delete AFTER DELETE ON main.dead_letters
BEGIN
  UPDATE temp.store_counts SET dead_letters = dead_letters - 1;
END;

CREATE TEMP TRIGGER IF NOT EXISTS store_counts_assign_insert AFTER INSERT ON main.assign_jobs
BEGIN
  UPDATE temp.store_counts SET
    assign_queued = assign_queued + iif(NEW.status = 'queued', 1, 0),
    assign_running = assign_running + iif(NEW.status = 'running', 1, 0),
    assign_failed = assign_failed + iif(NEW.status = 'failed', 1, 0),
    assign_timed_out = assign_timed_out + iif(NEW.status = 'timed_out', 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_assign_delete AFTER DELETE ON main.assign_jobs
BEGIN
  UPDATE temp.store_counts SET
    assign_queued = assign_queued - iif(OLD.status = 'queued', 1, 0),
    assign_running = assign_running - iif(OLD.status = 'running', 1, 0),
    assign_failed = assign_failed - iif(OLD.status = 'failed', 1, 0),
    assign_timed_out = assign_timed_out - iif(OLD.status = 'timed_out', 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_assign_status AFTER UPDATE OF status ON main.assign_jobs
WHEN OLD.status IS NOT NEW.status
BEGIN
  UPDATE temp.store_counts SET
    assign_queued = assign_queued - iif(OLD.status = 'queued', 1, 0) + iif(NEW.status = 'queued', 1, 0),
    assign_running = assign_running - iif(OLD.status = 'running', 1, 0) + iif(NEW.status = 'running', 1, 0),
    assign_failed = assign_failed - iif(OLD.status = 'failed', 1, 0) + iif(NEW.status = 'failed', 1, 0),
    assign_timed_out = assign_timed_out - iif(OLD.status = 'timed_out', 1, 0) + iif(NEW.status = 'timed_out', 1, 0);
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_assign_conflict BEFORE INSERT ON main.assign_jobs
WHEN EXISTS (SELECT 1 FROM main.assign_jobs WHERE job_id = NEW.job_id) OR EXISTS (SELECT 1 FROM main.assign_jobs WHERE rowid = NEW.rowid)
BEGIN
  UPDATE temp.store_counts SET stale = 1;
END;
CREATE TEMP TRIGGER IF NOT EXISTS store_counts_assign_rekey AFTER UPDATE ON main.assign_jobs
WHEN NEW.job_id IS NOT OLD.job_id OR NEW.rowid IS NOT OLD.rowid
BEGIN
  UPDATE temp.store_counts SET stale = 1;
END;

-- The count: one statement, so every count and both versions come from one snapshot.
INSERT OR REPLACE INTO temp.store_counts VALUES (1,
  (SELECT COUNT(*) FROM main.messages),
  (SELECT COUNT(*) FROM main.messages WHERE status = 'queued' AND priority >= 7),
  (SELECT COUNT(*) FROM main.messages WHERE status = 'queued' AND priority < 7),
  (SELECT COUNT(*) FROM main.dead_letters),
  (SELECT COUNT(*) FROM main.assign_jobs WHERE status = 'queued'),
  (SELECT COUNT(*) FROM main.assign_jobs WHERE status = 'running'),
  (SELECT COUNT(*) FROM main.assign_jobs WHERE status = 'failed'),
  (SELECT COUNT(*) FROM main.assign_jobs WHERE status = 'timed_out'),
  0,
  (SELECT data_version FROM pragma_data_version()),
  (SELECT schema_version FROM pragma_schema_version()));
