-- Indexes for a log that has grown large. Applied, in one IMMEDIATE transaction, once
-- `messages` reaches LARGE_LOG_ROWS rows (src/store/scale.rs): at open, or by the store
-- call that finds it crossed. A smaller file keeps the original's schema exactly
-- (the golden traces and fixtures pin the sqlite_master listing of a fresh store), and
-- below that size the original's plans take a millisecond or two anyway.
--
-- Each index on messages costs one WAL page per insert, so this set replaces original
-- indexes rather than adding to them: an auditLog writes 6 pages (table, id, recipient,
-- status, correlation, trace) instead of 9, plus one for a `topic:` recipient and one
-- for a role key. The original store and better-sqlite3 open such a file unchanged; an
-- original that re-applies schema.sql (after a version mismatch) re-creates the replaced
-- indexes, and the next open here drops them again.

-- getAuditMessagesForAgent/pollForAgent: newest first for one recipient, ties in the order
-- of the original's plan (see RECENT_FOR_AGENT in src/store/messages.rs).
-- Replaces idx_messages_to_agent(to_agent, status).
CREATE INDEX IF NOT EXISTS idx_messages_to_agent_recent ON messages(to_agent, created_at_ms DESC, status);
DROP INDEX IF EXISTS idx_messages_to_agent;

-- The topic half of the same query. Partial: only rows addressed to `topic:…` have an entry.
CREATE INDEX IF NOT EXISTS idx_messages_topic_recent ON messages(topic, created_at_ms DESC)
  WHERE substr(to_agent, 1, 6) = 'topic:';

-- getDeliveryStats (acked since …), getQueueDepths/getHubStats (queued by priority),
-- sweepExpired (queued, then their expiry). Replaces idx_messages_status(status).
CREATE INDEX IF NOT EXISTS idx_messages_status_time ON messages(status, created_at_ms);
DROP INDEX IF EXISTS idx_messages_status;

-- listPendingRoleMessages: the original index without the rows that carry no role key.
-- Replaces idx_messages_role_key(role_key_wire, status, expires_at_ms).
CREATE INDEX IF NOT EXISTS idx_messages_role_pending ON messages(role_key_wire, status, expires_at_ms)
  WHERE role_key_wire IS NOT NULL;
DROP INDEX IF EXISTS idx_messages_role_key;

-- No statement of the store reads these two.
DROP INDEX IF EXISTS idx_messages_expires;
DROP INDEX IF EXISTS idx_messages_priority;
