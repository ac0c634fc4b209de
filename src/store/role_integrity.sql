-- Schema 8: an active role needs a holder. The CHECK in schema.sql covers a table it creates;
-- these triggers, created at every open, cover a table an older version created (CREATE TABLE
-- IF NOT EXISTS cannot add a CHECK). Both raise the same message. The indentation is the
-- original's: sqlite_master keeps each trigger's text as written.
    CREATE TRIGGER IF NOT EXISTS role_registry_active_holder_insert
    BEFORE INSERT ON role_registry
    WHEN NEW.state = 'active' AND NEW.holder_agent_id IS NULL
    BEGIN
      SELECT RAISE(ABORT, 'CHECK constraint failed: active role requires holder_agent_id');
    END;
    CREATE TRIGGER IF NOT EXISTS role_registry_active_holder_update
    BEFORE UPDATE OF state, holder_agent_id ON role_registry
    WHEN NEW.state = 'active' AND NEW.holder_agent_id IS NULL
    BEGIN
      SELECT RAISE(ABORT, 'CHECK constraint failed: active role requires holder_agent_id');
    END;
