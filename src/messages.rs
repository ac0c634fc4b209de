//! Messages: audit log, lookups, status, replay for agents, dead letters.
