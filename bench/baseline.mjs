// Benchmark baseline: a minimal store on better-sqlite3 doing, for every benchmarked method,
// the statements, binding and row parsing of the hub's original JavaScript store (schema
// "6"; with `schema: 7 | 8` the later originals, bench/baseline-later.mjs). A yardstick,
// not a product: only the timed methods are here, and nothing outside them is validated.
// Like the original's cost profile: statements it kept prepared are prepared once, those it
// built per call (listAssigns, findReflexion with a context) per call; role keys decoded and
// re-encoded the same way; ids from a JS uuidv7 with a pooled random buffer; createAssign and
// updateAssignStatus build the status-change event even with no listener.

import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  agentRow,
  assignRow,
  candidateRow,
  clampDuration,
  clampMax,
  clampPriority,
  DEFAULT_ASSIGN_MS,
  decodeRoleKey,
  encodeRoleKey,
  messageRow,
  reflexionRow,
  ROLE_STATES,
  TERMINAL,
  uuidv7,
} from './baseline-parts.mjs';
import { laterAgentMethods, openLaterSchema } from './baseline-later.mjs';
import { loadReference } from '../tools/reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export { decodeRoleKey, encodeRoleKey, uuidv7 };

/** The addon's schema file: the same v6 schema the original applies. */
export const SCHEMA_PATH = join(here, '..', 'src', 'store', 'schema.sql');

/**
 * The baseline store on `dbPath`. `Database` is better-sqlite3 built for the running Node
 * unless another better-sqlite3-shaped class is given (bench/node-sqlite.mjs).
 */
export function createBaselineStore(dbPath, { Database = loadReference(), schema = 6 } = {}) {
  mkdirSync(dirname(dbPath), { recursive: true });
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('wal_autocheckpoint = 1000');
  db.exec('CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT)');
  const version = db.prepare("SELECT value FROM _meta WHERE key='schema_version'").pluck().get();
  if (version !== String(schema)) {
    db.exec(readFileSync(SCHEMA_PATH, 'utf8'));
    db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('schema_version', ?)").run(String(schema));
  }
  if (schema >= 7) openLaterSchema(db, schema);

  const q = (sql) => db.prepare(sql);
  const st = {
    agentUpsert: q(`INSERT INTO agents (agent_id, cli, pid, capabilities_json, topics_json, last_seen_ms, lease_expires_ms, status, metadata_json)
      VALUES (@agent_id, @cli, @pid, @capabilities_json, @topics_json, @last_seen_ms, @lease_expires_ms, @status, @metadata_json)
      ON CONFLICT(agent_id) DO UPDATE SET cli=excluded.cli, pid=excluded.pid, capabilities_json=excluded.capabilities_json,
        topics_json=excluded.topics_json, last_seen_ms=excluded.last_seen_ms, lease_expires_ms=excluded.lease_expires_ms,
        status=excluded.status, metadata_json=excluded.metadata_json`),
    agentGet: q('SELECT * FROM agents WHERE agent_id = ?'),
    agentBeat: q("UPDATE agents SET last_seen_ms=?, lease_expires_ms=?, status='online' WHERE agent_id=?"),
    agentStatus: q('UPDATE agents SET status=? WHERE agent_id=?'),
    markStale: q("UPDATE agents SET status='stale' WHERE status='online' AND lease_expires_ms < ?"),
    markOffline: q("UPDATE agents SET status='offline' WHERE status='stale' AND lease_expires_ms < ? - 300000"),

    msgInsert: q(`INSERT INTO messages (id, type, from_agent, to_agent, topic, priority, ttl_ms, created_at_ms, expires_at_ms, correlation_id, trace_id, payload_json, status, role_key_wire)
      VALUES (@id, @type, @from_agent, @to_agent, @topic, @priority, @ttl_ms, @created_at_ms, @expires_at_ms, @correlation_id, @trace_id, @payload_json, @status, @role_key_wire)`),
    msgGet: q('SELECT * FROM messages WHERE id=?'),
    msgRecent: q('SELECT * FROM messages WHERE to_agent=? ORDER BY created_at_ms DESC LIMIT ?'),
    msgRecentTopics: q(`SELECT * FROM messages WHERE to_agent=?
      OR (substr(to_agent, 1, 6)='topic:' AND topic IN (SELECT value FROM json_each(?)))
      ORDER BY created_at_ms DESC LIMIT ?`),

    roleGet: q('SELECT * FROM role_registry WHERE role_key_wire = ?'),
    roleInsert: q(`INSERT INTO role_registry (role_key_wire, project_id, role_kind, scope_id, state, holder_agent_id,
        previous_holder_agent_id, epoch, activation_seq, activation_id, activation_deadline_ms, holder_lease_expires_ms,
        charter_version, charter_acked_epoch, retry_count, next_probe_ms, blocked_reason, last_transition_ms, last_reason, version)
      VALUES (@role_key_wire, @project_id, @role_kind, @scope_id, @state, @holder_agent_id, @previous_holder_agent_id, @epoch,
        @activation_seq, @activation_id, @activation_deadline_ms, @holder_lease_expires_ms, @charter_version, @charter_acked_epoch,
        @retry_count, @next_probe_ms, @blocked_reason, @last_transition_ms, @last_reason, @version)`),
    roleReserve: q(`UPDATE role_registry SET state=@state, holder_agent_id=@holder_agent_id,
        previous_holder_agent_id=@previous_holder_agent_id, epoch=@epoch, activation_seq=@activation_seq,
        activation_id=@activation_id, activation_deadline_ms=@activation_deadline_ms,
        holder_lease_expires_ms=@holder_lease_expires_ms, charter_version=@charter_version,
        charter_acked_epoch=@charter_acked_epoch, retry_count=@retry_count, next_probe_ms=@next_probe_ms,
        blocked_reason=@blocked_reason, last_transition_ms=@last_transition_ms, last_reason=@last_reason, version=version + 1
      WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch`),
    roleCas: q(`UPDATE role_registry SET state=@state, holder_agent_id=@holder_agent_id,
        previous_holder_agent_id=@previous_holder_agent_id, activation_id=@activation_id,
        activation_deadline_ms=@activation_deadline_ms, holder_lease_expires_ms=@holder_lease_expires_ms,
        charter_version=@charter_version, charter_acked_epoch=@charter_acked_epoch, retry_count=@retry_count,
        next_probe_ms=@next_probe_ms, blocked_reason=@blocked_reason, last_transition_ms=@last_transition_ms,
        last_reason=@last_reason, version=version + 1
      WHERE role_key_wire=@role_key_wire AND epoch=@expected_epoch AND activation_seq=@expected_activation_seq
        AND activation_id IS @expected_activation_id AND version=@expected_version`),
    roleList: q('SELECT * FROM role_registry ORDER BY role_key_wire'),
    candidatesOf: q('SELECT * FROM role_candidates WHERE role_key_wire = ? ORDER BY priority DESC, updated_at_ms DESC, agent_id'),
    pendingOf: q(`SELECT * FROM messages WHERE role_key_wire=? AND status IN ('queued','delivered') AND expires_at_ms > ?
      ORDER BY priority DESC, created_at_ms ASC, id`),
    recoverExpired: q(`UPDATE role_registry SET state='electable', previous_holder_agent_id=holder_agent_id,
        holder_agent_id=NULL, epoch=epoch + 1, activation_seq=activation_seq + 1, activation_id=NULL,
        activation_deadline_ms=NULL, holder_lease_expires_ms=NULL, charter_acked_epoch=NULL, blocked_reason=NULL,
        last_transition_ms=@now, last_reason='restart_holder_lease_expired', version=version + 1
      WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch`),
    recoverLive: q(`UPDATE role_registry SET state='elected-probing', epoch=epoch + 1, activation_seq=activation_seq + 1,
        activation_id=@activation_id, activation_deadline_ms=NULL, charter_acked_epoch=NULL, blocked_reason=NULL,
        last_transition_ms=@now, last_reason='restart_reprobe_required', version=version + 1
      WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch`),
    recoverOrphan: q(`UPDATE role_registry SET state='electable', epoch=epoch + 1, activation_seq=activation_seq + 1,
        activation_id=NULL, activation_deadline_ms=NULL, charter_acked_epoch=NULL, last_transition_ms=@now,
        last_reason='restart_activation_fenced', version=version + 1
      WHERE role_key_wire=@role_key_wire AND version=@expected_version AND epoch=@expected_epoch`),

    assignInsert: q(`INSERT INTO assign_jobs (job_id, supervisor_agent, worker_agent, topic, task, payload_json, status, attempt,
        retry_count, max_retries, priority, ttl_ms, timeout_ms, deadline_ms, trace_id, correlation_id, last_message_id,
        result_json, error_json, created_at_ms, updated_at_ms, started_at_ms, dispatched_at_ms, completed_at_ms, last_retry_at_ms)
      VALUES (@job_id, @supervisor_agent, @worker_agent, @topic, @task, @payload_json, @status, @attempt, @retry_count,
        @max_retries, @priority, @ttl_ms, @timeout_ms, @deadline_ms, @trace_id, @correlation_id, @last_message_id,
        @result_json, @error_json, @created_at_ms, @updated_at_ms, @started_at_ms, @dispatched_at_ms, @completed_at_ms,
        @last_retry_at_ms)`),
    assignGet: q('SELECT * FROM assign_jobs WHERE job_id = ?'),
    assignUpdate: q(`UPDATE assign_jobs SET supervisor_agent=@supervisor_agent, worker_agent=@worker_agent, topic=@topic,
        task=@task, payload_json=@payload_json, status=@status, attempt=@attempt, retry_count=@retry_count,
        max_retries=@max_retries, priority=@priority, ttl_ms=@ttl_ms, timeout_ms=@timeout_ms, deadline_ms=@deadline_ms,
        trace_id=@trace_id, correlation_id=@correlation_id, last_message_id=@last_message_id, result_json=@result_json,
        error_json=@error_json, updated_at_ms=@updated_at_ms, started_at_ms=@started_at_ms,
        dispatched_at_ms=@dispatched_at_ms, completed_at_ms=@completed_at_ms, last_retry_at_ms=@last_retry_at_ms
      WHERE job_id=@job_id`),

    reflexionInsert: q(`INSERT INTO reflexion_entries (id, type, error_pattern, error_message, context_json, solution,
        solution_code, adaptive_state_json, confidence, hit_count, success_count, last_hit_ms, created_at_ms, updated_at_ms)
      VALUES (@id, @type, @error_pattern, @error_message, @context_json, @solution, @solution_code, @adaptive_state_json,
        @confidence, @hit_count, @success_count, @last_hit_ms, @created_at_ms, @updated_at_ms)`),
    reflexionGet: q('SELECT * FROM reflexion_entries WHERE id = ?'),
    reflexionExact: q('SELECT * FROM reflexion_entries WHERE error_pattern = ? ORDER BY confidence DESC'),
    reflexionLike: q("SELECT * FROM reflexion_entries WHERE error_pattern LIKE ? ESCAPE '\\' ORDER BY confidence DESC LIMIT 10"),
  };

  const listeners = new Set();
  function notify(row) {
    const event = {
      job_id: row.job_id,
      status: row.status,
      result: row.result ?? row.error ?? null,
      timestamp: new Date(row.updated_at_ms || Date.now()).toISOString(),
    };
    for (const fn of Array.from(listeners)) {
      try {
        fn(event, row);
      } catch {}
    }
  }

  function identity(input) {
    const wire = input?.role_key_wire ?? input?.roleKeyWire;
    const key = decodeRoleKey(wire);
    const id = { role_key_wire: wire, project_id: key.project_id, role_kind: key.role_kind, scope_id: key.scope_id ?? '' };
    for (const f of ['project_id', 'role_kind', 'scope_id']) {
      if (Object.hasOwn(input, f) && input[f] !== id[f]) throw new Error(`role key identity mismatch: ${f}`);
    }
    return id;
  }

  function whyFailed(cur, exp) {
    if (!cur) return 'not_found';
    if (cur.version !== exp.version) return 'stale_version';
    if (cur.epoch !== exp.epoch) return 'stale_epoch';
    if (cur.activation_seq !== exp.activation_seq) return 'stale_activation_seq';
    if (cur.activation_id !== exp.activation_id) return 'stale_activation_id';
    return 'cas_conflict';
  }

  const reserve = db.transaction((input) => {
    const id = identity(input);
    const cur = st.roleGet.get(id.role_key_wire) ?? null;
    const expVersion = input.expected_version ?? input.expectedVersion ?? cur?.version;
    const expEpoch = input.expected_epoch ?? input.expectedEpoch ?? cur?.epoch;
    if (cur && expVersion !== cur.version) return { ok: false, reason: 'stale_version', role: cur };
    if (cur && expEpoch !== cur.epoch) return { ok: false, reason: 'stale_epoch', role: cur };
    const epoch = input.epoch ?? input.next_epoch ?? (cur ? cur.epoch + 1 : 0);
    if (cur && epoch !== cur.epoch + 1) return { ok: false, reason: 'stale_epoch', role: cur };
    const aseq = input.activation_seq ?? input.next_activation_seq ?? (cur ? cur.activation_seq + 1 : 0);
    if (cur && aseq !== cur.activation_seq + 1) return { ok: false, reason: 'stale_activation_seq', role: cur };
    const state = input.state ?? (input.holder_agent_id ? 'elected-probing' : 'electable');
    if (!ROLE_STATES.includes(state)) throw new Error(`invalid role reachability state: ${state}`);
    const row = {
      ...id,
      state,
      holder_agent_id: input.holder_agent_id ?? null,
      previous_holder_agent_id:
        input.previous_holder_agent_id ??
        (cur?.holder_agent_id !== input.holder_agent_id
          ? cur?.holder_agent_id ?? null
          : cur?.previous_holder_agent_id ?? null),
      epoch,
      activation_seq: aseq,
      activation_id: input.activation_id ?? (input.holder_agent_id ? uuidv7() : cur?.activation_id ?? null),
      activation_deadline_ms: input.activation_deadline_ms ?? cur?.activation_deadline_ms ?? null,
      holder_lease_expires_ms: input.holder_lease_expires_ms ?? cur?.holder_lease_expires_ms ?? null,
      charter_version: input.charter_version ?? cur?.charter_version ?? null,
      charter_acked_epoch: input.charter_acked_epoch ?? cur?.charter_acked_epoch ?? null,
      retry_count: input.retry_count ?? cur?.retry_count ?? 0,
      next_probe_ms: input.next_probe_ms ?? cur?.next_probe_ms ?? null,
      blocked_reason: input.blocked_reason === undefined ? cur?.blocked_reason ?? null : input.blocked_reason,
      last_transition_ms: input.last_transition_ms ?? Date.now(),
      last_reason: input.last_reason ?? 'role_reserved',
      version: 0,
      expected_version: cur?.version,
      expected_epoch: cur?.epoch,
    };
    if (!cur) {
      st.roleInsert.run(row);
    } else if (st.roleReserve.run(row).changes !== 1) {
      const latest = st.roleGet.get(id.role_key_wire) ?? null;
      const guard = { version: cur.version, epoch: cur.epoch, activation_seq: cur.activation_seq, activation_id: cur.activation_id };
      return { ok: false, reason: whyFailed(latest, guard), role: latest };
    }
    return { ok: true, role: st.roleGet.get(id.role_key_wire) };
  });

  const recover = db.transaction((now) => {
    for (const r of st.roleList.all()) {
      const guard = { role_key_wire: r.role_key_wire, expected_version: r.version, expected_epoch: r.epoch, now };
      if (r.holder_agent_id && (r.holder_lease_expires_ms == null || r.holder_lease_expires_ms <= now)) {
        st.recoverExpired.run(guard);
      } else if (r.holder_agent_id) {
        st.recoverLive.run({ ...guard, activation_id: uuidv7() });
      } else if (r.activation_id || r.state === 'elected-probing' || (schema >= 8 && r.state === 'active')) {
        st.recoverOrphan.run(guard);
      }
    }
    const roles = st.roleList.all();
    return {
      roles,
      candidates: roles.flatMap((r) => st.candidatesOf.all(r.role_key_wire).map(candidateRow)),
      pending_messages: roles.flatMap((r) => st.pendingOf.all(r.role_key_wire, now).map(messageRow)),
    };
  });

  const store = {
    db,
    uuidv7,
    close() {
      db.close();
    },

    // --- agents ---
    registerAgent({ agent_id, cli, pid, capabilities = [], topics = [], heartbeat_ttl_ms = 30000, metadata = {} }) {
      const now = Date.now();
      const lease = now + heartbeat_ttl_ms;
      const leaseId = uuidv7();
      const info = st.agentUpsert.run({
        agent_id,
        cli,
        pid: pid ?? null,
        capabilities_json: JSON.stringify(capabilities),
        topics_json: JSON.stringify(topics),
        last_seen_ms: now,
        lease_expires_ms: lease,
        status: 'online',
        metadata_json: JSON.stringify(metadata),
      });
      const saved = agentRow(st.agentGet.get(agent_id));
      return {
        agent_id,
        lease_id: leaseId,
        lease_expires_ms: lease,
        server_time_ms: now,
        effective: {
          updated: info.changes > 0,
          online: saved?.status === 'online' && Number(saved.lease_expires_ms) === lease,
          status: saved?.status ?? null,
          last_seen_ms: saved?.last_seen_ms ?? null,
          lease_expires_ms: saved?.lease_expires_ms ?? null,
          store_type: 'sqlite',
          db_path: dbPath ?? null,
        },
      };
    },
    getAgent(id) {
      return agentRow(st.agentGet.get(id));
    },
    refreshLease(agentId, ttlMs = 30000) {
      const now = Date.now();
      const info = st.agentBeat.run(now, now + ttlMs, agentId);
      return {
        agent_id: agentId,
        lease_expires_ms: now + ttlMs,
        server_time_ms: now,
        effective: { updated: info.changes > 0, store_type: 'sqlite', db_path: dbPath ?? null },
      };
    },

    // --- messages ---
    auditLog({ type, from, to, topic, priority = 5, ttl_ms = 300000, payload = {}, trace_id, correlation_id, status = 'queued', role_key_wire = null }) {
      const now = Date.now();
      const row = {
        id: uuidv7(),
        type,
        from_agent: from,
        to_agent: to,
        topic,
        priority,
        ttl_ms,
        created_at_ms: now,
        expires_at_ms: now + ttl_ms,
        correlation_id: correlation_id || uuidv7(),
        trace_id: trace_id || uuidv7(),
        payload_json: JSON.stringify(payload),
        status,
        role_key_wire,
      };
      st.msgInsert.run(row);
      return { ...row, payload };
    },
    getMessage(id) {
      return messageRow(st.msgGet.get(id));
    },
    getAuditMessagesForAgent(agentId, { max_messages = 20, include_topics = null } = {}) {
      const limit = clampMax(max_messages);
      const topics = Array.isArray(include_topics) && include_topics.length
        ? include_topics
        : store.getAgent(agentId)?.topics || [];
      const rows = topics.length
        ? st.msgRecentTopics.all(agentId, JSON.stringify(topics), limit)
        : st.msgRecent.all(agentId, limit);
      return rows.map(messageRow);
    },

    // --- assign jobs ---
    createAssign({
      job_id, supervisor_agent, worker_agent, topic = 'assign.job', task = '', payload = {}, status = 'queued',
      attempt = 1, retry_count = 0, max_retries = 0, priority = 5, ttl_ms = DEFAULT_ASSIGN_MS,
      timeout_ms = DEFAULT_ASSIGN_MS, deadline_ms, dispatched_at_ms = null, trace_id, correlation_id,
      last_message_id = null, result = null, error = null,
    }) {
      const now = Date.now();
      const timeout = clampDuration(timeout_ms, DEFAULT_ASSIGN_MS);
      const row = {
        job_id: job_id || uuidv7(),
        supervisor_agent,
        worker_agent,
        topic: String(topic || 'assign.job'),
        task: String(task || ''),
        payload_json: JSON.stringify(payload || {}),
        status,
        attempt: Math.max(1, Number(attempt) || 1),
        retry_count: Math.max(0, Number(retry_count) || 0),
        max_retries: Math.max(0, Number(max_retries) || 0),
        priority: clampPriority(priority, 5),
        ttl_ms: clampDuration(ttl_ms, timeout),
        timeout_ms: timeout,
        deadline_ms: Number.isFinite(Number(deadline_ms)) ? Math.trunc(Number(deadline_ms)) : now + timeout,
        trace_id: trace_id || uuidv7(),
        correlation_id: correlation_id || uuidv7(),
        last_message_id,
        result_json: result == null ? null : JSON.stringify(result),
        error_json: error == null ? null : JSON.stringify(error),
        created_at_ms: now,
        updated_at_ms: now,
        started_at_ms: status === 'running' ? now : null,
        dispatched_at_ms:
          dispatched_at_ms == null || !Number.isFinite(Number(dispatched_at_ms)) ? null : Math.trunc(Number(dispatched_at_ms)),
        completed_at_ms: TERMINAL.includes(status) ? now : null,
        last_retry_at_ms: retry_count > 0 ? now : null,
      };
      st.assignInsert.run(row);
      const saved = store.getAssign(row.job_id);
      notify(saved);
      return saved;
    },
    getAssign(jobId) {
      return assignRow(st.assignGet.get(jobId));
    },
    updateAssignStatus(jobId, status, patch = {}) {
      const cur = store.getAssign(jobId);
      if (!cur) return null;
      const now = Date.now();
      const next = status || cur.status;
      const terminal = TERMINAL.includes(next);
      const timeout = clampDuration(patch.timeout_ms ?? cur.timeout_ms, cur.timeout_ms);
      const own = (k) => Object.hasOwn(patch, k);
      st.assignUpdate.run({
        job_id: cur.job_id,
        supervisor_agent: patch.supervisor_agent ?? cur.supervisor_agent,
        worker_agent: patch.worker_agent ?? cur.worker_agent,
        topic: patch.topic ?? cur.topic,
        task: patch.task ?? cur.task,
        payload_json: JSON.stringify(patch.payload ?? cur.payload ?? {}),
        status: next,
        attempt: Math.max(1, Number(patch.attempt ?? cur.attempt) || cur.attempt || 1),
        retry_count: Math.max(0, Number(patch.retry_count ?? cur.retry_count) || 0),
        max_retries: Math.max(0, Number(patch.max_retries ?? cur.max_retries) || 0),
        priority: clampPriority(patch.priority ?? cur.priority, cur.priority || 5),
        ttl_ms: clampDuration(patch.ttl_ms ?? cur.ttl_ms, cur.ttl_ms || timeout),
        timeout_ms: timeout,
        // Evaluated in the row's order, reading the patch as often as the original did.
        deadline_ms: (() => {
          if (own('deadline_ms')) return patch.deadline_ms == null ? null : Math.trunc(Number(patch.deadline_ms));
          if (terminal) return null;
          if (next === 'running' && !cur.deadline_ms) return now + timeout;
          return cur.deadline_ms;
        })(),
        trace_id: patch.trace_id ?? cur.trace_id,
        correlation_id: patch.correlation_id ?? cur.correlation_id,
        last_message_id: own('last_message_id') ? patch.last_message_id : cur.last_message_id,
        result_json: own('result')
          ? patch.result == null ? null : JSON.stringify(patch.result)
          : cur.result == null ? null : JSON.stringify(cur.result),
        error_json: own('error')
          ? patch.error == null ? null : JSON.stringify(patch.error)
          : cur.error == null ? null : JSON.stringify(cur.error),
        updated_at_ms: now,
        started_at_ms: own('started_at_ms')
          ? patch.started_at_ms
          : next === 'running'
            ? cur.started_at_ms || now
            : cur.started_at_ms,
        dispatched_at_ms: own('dispatched_at_ms') ? patch.dispatched_at_ms : cur.dispatched_at_ms,
        completed_at_ms: own('completed_at_ms')
          ? patch.completed_at_ms
          : terminal
            ? cur.completed_at_ms || now
            : cur.completed_at_ms,
        last_retry_at_ms: own('last_retry_at_ms') ? patch.last_retry_at_ms : cur.last_retry_at_ms,
      });
      const saved = store.getAssign(jobId);
      if (saved && cur.status !== saved.status) notify(saved);
      return saved;
    },
    listAssigns({ supervisor_agent, worker_agent, status, statuses, trace_id, correlation_id, active_before_ms, limit = 50 } = {}) {
      const where = [];
      const args = [];
      const eq = (col, v) => {
        if (v) {
          where.push(`${col} = ?`);
          args.push(v);
        }
      };
      eq('supervisor_agent', supervisor_agent);
      eq('worker_agent', worker_agent);
      eq('trace_id', trace_id);
      eq('correlation_id', correlation_id);
      const list = Array.isArray(statuses) && statuses.length ? statuses : status ? [status] : [];
      if (list.length) {
        where.push(`status IN (${list.map(() => '?').join(',')})`);
        args.push(...list);
      }
      if (Number.isFinite(Number(active_before_ms))) {
        where.push('deadline_ms IS NOT NULL AND deadline_ms <= ?');
        args.push(Math.trunc(Number(active_before_ms)));
      }
      args.push(clampMax(limit, 50));
      // Prepared per call, as the original does (its WHERE clause varies per call).
      const sql = `
        SELECT * FROM assign_jobs
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY updated_at_ms DESC
        LIMIT ?`;
      return db.prepare(sql).all(...args).map(assignRow);
    },

    // --- reflexion ---
    addReflexion({
      type = 'reflexion', error_pattern, error_message, context = {}, solution, solution_code = null,
      adaptive_state = {}, confidence = 0.5, hit_count = 1, success_count = 0, last_hit_ms, created_at_ms, updated_at_ms,
    }) {
      const now = Date.now();
      const id = uuidv7();
      st.reflexionInsert.run({
        id,
        type,
        error_pattern,
        error_message,
        context_json: JSON.stringify(context),
        solution,
        solution_code,
        adaptive_state_json: JSON.stringify(adaptive_state),
        confidence,
        hit_count,
        success_count,
        last_hit_ms: last_hit_ms ?? now,
        created_at_ms: created_at_ms ?? now,
        updated_at_ms: updated_at_ms ?? now,
      });
      return store.getReflexion(id);
    },
    getReflexion(id) {
      return reflexionRow(st.reflexionGet.get(id));
    },
    findReflexion(errorPattern, context = {}) {
      const keys = Object.keys(context).filter((k) => context[k] != null);
      const like = () => `%${errorPattern.replace(/[%_\\]/g, '\\$&').slice(0, 100)}%`;
      if (keys.length === 0) {
        const rows = st.reflexionExact.all(errorPattern);
        if (rows.length) return rows.map(reflexionRow);
        return st.reflexionLike.all(like()).map(reflexionRow);
      }
      const extra = keys.map((k) => ` AND json_extract(context_json, '$.${k}') = ?`).join('');
      const vals = keys.map((k) => context[k]);
      // Prepared per call, as the original does.
      const rows = db
        .prepare(`SELECT * FROM reflexion_entries WHERE error_pattern = ?${extra} ORDER BY confidence DESC`)
        .all(errorPattern, ...vals);
      if (rows.length) return rows.map(reflexionRow);
      return db
        .prepare(`SELECT * FROM reflexion_entries WHERE error_pattern LIKE ? ESCAPE '\\'${extra} ORDER BY confidence DESC LIMIT 10`)
        .all(like(), ...vals)
        .map(reflexionRow);
    },

    // --- role registry ---
    getRole(roleKeyWire) {
      decodeRoleKey(roleKeyWire);
      return st.roleGet.get(roleKeyWire) ?? null;
    },
    upsertRoleReservation(input) {
      return reserve.immediate(input);
    },
    compareAndSetRole(input) {
      const id = identity(input);
      const cur = st.roleGet.get(id.role_key_wire) ?? null;
      if (!cur) return { ok: false, reason: 'not_found', role: null };
      const own = (k) => Object.hasOwn(input, k);
      const hasSeq = own('expected_activation_seq') || own('expectedActivationSeq') || own('activation_seq');
      const hasAid = own('expected_activation_id') || own('expectedActivationId') || own('activation_id');
      const exp = {
        version: input.expected_version ?? input.expectedVersion ?? input.version,
        epoch: input.expected_epoch ?? input.expectedEpoch ?? input.epoch,
        activation_seq: input.expected_activation_seq ?? input.expectedActivationSeq ?? input.activation_seq,
        activation_id: own('expected_activation_id')
          ? input.expected_activation_id
          : own('expectedActivationId')
            ? input.expectedActivationId
            : input.activation_id,
      };
      if (exp.version == null || exp.epoch == null || !hasSeq || !hasAid) {
        return { ok: false, reason: 'invalid_cas', role: cur };
      }
      const pre = whyFailed(cur, exp);
      if (pre !== 'cas_conflict') return { ok: false, reason: pre, role: cur };
      const patch = input.patch ?? input.changes ?? {};
      const state = patch.state ?? cur.state;
      if (!ROLE_STATES.includes(state)) throw new Error(`invalid role reachability state: ${state}`);
      const pick = (k) => (patch[k] === undefined ? cur[k] : patch[k]);
      const info = st.roleCas.run({
        role_key_wire: id.role_key_wire,
        expected_version: exp.version,
        expected_epoch: exp.epoch,
        expected_activation_seq: exp.activation_seq,
        expected_activation_id: exp.activation_id,
        state,
        holder_agent_id: pick('holder_agent_id'),
        previous_holder_agent_id: pick('previous_holder_agent_id'),
        activation_id: pick('activation_id'),
        activation_deadline_ms: pick('activation_deadline_ms'),
        holder_lease_expires_ms: pick('holder_lease_expires_ms'),
        charter_version: pick('charter_version'),
        charter_acked_epoch: pick('charter_acked_epoch'),
        retry_count: patch.retry_count ?? cur.retry_count,
        next_probe_ms: pick('next_probe_ms'),
        blocked_reason: pick('blocked_reason'),
        last_transition_ms: patch.last_transition_ms ?? Date.now(),
        last_reason: patch.last_reason ?? cur.last_reason,
      });
      if (info.changes !== 1) {
        const latest = st.roleGet.get(id.role_key_wire) ?? null;
        return { ok: false, reason: whyFailed(latest, exp), role: latest };
      }
      return { ok: true, role: st.roleGet.get(id.role_key_wire) };
    },
    recoverRoleRegistry(now) {
      return recover.immediate(now);
    },

    updateAgentStatus(agentId, status) {
      return st.agentStatus.run(status, agentId).changes > 0;
    },
    sweepStaleAgents() {
      const now = Date.now();
      return { stale: st.markStale.run(now).changes, offline: st.markOffline.run(now).changes };
    },
  };
  if (schema >= 7) Object.assign(store, laterAgentMethods(db, dbPath));
  if (schema >= 8) {
    // The v8 original runs compareAndSetRole in BEGIN IMMEDIATE.
    const cas = store.compareAndSetRole;
    const tx = db.transaction((input) => cas(input));
    store.compareAndSetRole = (input) => tx.immediate(input);
  }
  return store;
}
