// Public API of triflux-native-store: the triflux hub store (schema "6").
// Shapes follow the original hub/store.mjs exactly, key order included.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** better-sqlite3's error class: `name` is "SqliteError", `code` the SQLite result code name. */
export declare class SqliteError extends Error {
  constructor(message: string, code: string);
  readonly name: 'SqliteError';
  code: string;
}

export interface AgentRow {
  agent_id: string;
  cli: 'codex' | 'gemini' | 'claude' | 'other';
  pid: number | null;
  last_seen_ms: number;
  lease_expires_ms: number;
  status: 'online' | 'stale' | 'offline';
  project_id: string | null;
  session_id: string | null;
  host_id: string | null;
  /** Raw JSON text, not parsed (as in the original). */
  transport_locators_json: string;
  capabilities: Json;
  topics: Json;
  metadata: Json;
}

export interface RegisterAgentInput {
  agent_id: string;
  cli: string;
  pid?: number | string | null;
  capabilities?: unknown;
  topics?: unknown;
  heartbeat_ttl_ms?: number;
  metadata?: unknown;
  [other: string]: unknown;
}

export interface RegisterAgentResult {
  agent_id: unknown;
  lease_id: string;
  lease_expires_ms: number;
  server_time_ms: number;
  effective: {
    updated: boolean;
    online: boolean;
    status: string | null;
    last_seen_ms: number | null;
    lease_expires_ms: number | null;
    store_type: 'sqlite';
    db_path: string;
  };
}

export interface RefreshLeaseResult {
  agent_id: unknown;
  lease_expires_ms: number;
  server_time_ms: number;
  effective: { updated: boolean; store_type: 'sqlite'; db_path: string };
}

export type MessageType = 'request' | 'response' | 'event' | 'handoff' | 'human_request' | 'human_response' | 'system';
export type MessageStatus = 'queued' | 'delivered' | 'acked' | 'expired' | 'dead_letter';

export interface MessageRow {
  id: string;
  type: MessageType;
  from_agent: string;
  to_agent: string;
  topic: string;
  priority: number;
  ttl_ms: number;
  created_at_ms: number;
  expires_at_ms: number;
  correlation_id: string;
  trace_id: string;
  status: MessageStatus;
  role_key_wire: string | null;
  payload: Json;
}

export interface AuditLogInput {
  type: MessageType;
  from: string;
  to: string;
  topic: string;
  priority?: number;
  ttl_ms?: number;
  payload?: unknown;
  trace_id?: string;
  correlation_id?: string;
  status?: MessageStatus;
  role_key_wire?: string | null;
}

/** auditLog returns the written row with BOTH payload_json (text) and payload (the caller's value). */
export interface AuditLogResult extends Omit<MessageRow, 'payload'> {
  payload_json: string;
  payload: unknown;
}

export interface AuditQueryOptions {
  max_messages?: number;
  include_topics?: string[] | null;
}

export interface HumanRequestInput {
  requester_agent: string;
  kind: 'captcha' | 'approval' | 'credential' | 'choice' | 'text';
  prompt: string;
  requested_schema?: unknown;
  /** A duration from now, in ms. */
  deadline_ms: number;
  default_action: 'decline' | 'cancel' | 'timeout_continue';
  correlation_id?: string;
  trace_id?: string;
}

export interface HumanRequestRow {
  request_id: string;
  requester_agent: string;
  kind: string;
  prompt: string;
  state: 'pending' | 'accepted' | 'declined' | 'cancelled' | 'timed_out';
  deadline_ms: number;
  default_action: string;
  correlation_id: string;
  trace_id: string;
  schema: Json;
  response: Json;
}

export interface DeadLetterRow {
  message_id: string;
  reason: string;
  failed_at_ms: number;
  last_error: string | null;
}

export type AssignStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';

export interface AssignRow {
  job_id: string;
  supervisor_agent: string;
  worker_agent: string;
  topic: string;
  task: string;
  status: AssignStatus;
  attempt: number;
  retry_count: number;
  max_retries: number;
  priority: number;
  ttl_ms: number;
  timeout_ms: number;
  deadline_ms: number | null;
  trace_id: string;
  correlation_id: string;
  last_message_id: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  started_at_ms: number | null;
  dispatched_at_ms: number | null;
  completed_at_ms: number | null;
  last_retry_at_ms: number | null;
  payload: Json;
  result: Json;
  error: Json;
}

export interface CreateAssignInput {
  job_id?: string;
  supervisor_agent: string;
  worker_agent: string;
  topic?: string;
  task?: string;
  payload?: unknown;
  status?: AssignStatus;
  attempt?: number;
  retry_count?: number;
  max_retries?: number;
  priority?: number;
  ttl_ms?: number;
  timeout_ms?: number;
  deadline_ms?: number | null;
  dispatched_at_ms?: number | null;
  trace_id?: string;
  correlation_id?: string;
  last_message_id?: string | null;
  result?: unknown;
  error?: unknown;
}

export interface ListAssignsFilter {
  supervisor_agent?: string;
  worker_agent?: string;
  status?: AssignStatus;
  statuses?: AssignStatus[];
  trace_id?: string;
  correlation_id?: string;
  active_before_ms?: number;
  limit?: number;
}

export interface AssignStatusEvent {
  job_id: string;
  status: AssignStatus;
  result: Json;
  /** ISO-8601 of the row's updated_at_ms. */
  timestamp: string;
}

export interface ReflexionRow {
  id: string;
  type: string;
  error_pattern: string;
  error_message: string;
  solution: string;
  solution_code: string | null;
  confidence: number;
  hit_count: number;
  success_count: number;
  last_hit_ms: number;
  created_at_ms: number;
  updated_at_ms: number;
  context: Json;
  adaptive_state: Json;
}

export interface AddReflexionInput {
  type?: string;
  error_pattern: string;
  error_message: string;
  context?: unknown;
  solution: string;
  solution_code?: string | null;
  adaptive_state?: unknown;
  confidence?: number;
  hit_count?: number;
  success_count?: number;
  last_hit_ms?: number;
  created_at_ms?: number;
  updated_at_ms?: number;
}

export type RoleState = 'electable' | 'elected-probing' | 'active' | 'unreachable' | 'quarantined';

/** Role rows are returned raw, in column order. */
export interface RoleRow {
  role_key_wire: string;
  project_id: string;
  role_kind: 'cto' | 'lead';
  scope_id: string;
  state: RoleState;
  holder_agent_id: string | null;
  previous_holder_agent_id: string | null;
  epoch: number;
  activation_seq: number;
  activation_id: string | null;
  activation_deadline_ms: number | null;
  holder_lease_expires_ms: number | null;
  charter_version: string | null;
  charter_acked_epoch: number | null;
  retry_count: number;
  next_probe_ms: number | null;
  blocked_reason: string | null;
  last_transition_ms: number;
  last_reason: string;
  version: number;
}

export interface RoleCandidateRow {
  role_key_wire: string;
  agent_id: string;
  source: 'grant' | 'standup' | 'operator';
  priority: number;
  consecutive_probe_failures: number;
  excluded_until_ms: number | null;
  last_probe_ms: number | null;
  last_probe_code: string | null;
  updated_at_ms: number;
  transport_locators: Json;
}

export type RoleFailureReason =
  | 'not_found'
  | 'invalid_cas'
  | 'stale_version'
  | 'stale_epoch'
  | 'stale_activation_seq'
  | 'stale_activation_id'
  | 'cas_conflict';

export type RoleResult = { ok: true; role: RoleRow } | { ok: false; reason: RoleFailureReason; role: RoleRow | null };

/** Any input carrying a role key: `role_key_wire` (or `roleKeyWire`) plus optional identity checks. */
export interface RoleInput {
  role_key_wire?: string;
  roleKeyWire?: string;
  project_id?: string;
  role_kind?: 'cto' | 'lead';
  scope_id?: string;
  [field: string]: unknown;
}

export interface RoleKeyFilter {
  project_id?: string | null;
  role_kind?: string | null;
  scope_id?: string | null;
  state?: string | null;
  states?: string[];
}

export interface RecoveryResult {
  roles: RoleRow[];
  candidates: RoleCandidateRow[];
  pending_messages: MessageRow[];
}

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement {
  readonly source: string;
  readonly reader: boolean;
  readonly readonly: boolean;
  readonly database: Database;
  /** True while an iterate() of this statement is open. */
  readonly busy: boolean;
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): any;
  all(...params: unknown[]): any[];
  iterate(...params: unknown[]): IterableIterator<any>;
  pluck(toggle?: boolean): this;
  raw(toggle?: boolean): this;
  expand(toggle?: boolean): this;
  bind(...params: unknown[]): this;
  columns(): Array<{ name: string; column: string | null; table: string | null; database: string | null; type: string | null }>;
  /** Only `safeIntegers(false)` is accepted; BigInt results are not supported. */
  safeIntegers(toggle?: boolean): this;
}

export interface TransactionFunction<F extends (...args: any[]) => any> {
  (...args: Parameters<F>): ReturnType<F>;
  deferred(...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
  exclusive(...args: Parameters<F>): ReturnType<F>;
}

export interface DatabaseOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  timeout?: number;
}

export interface BackupMetadata {
  totalPages: number;
  remainingPages: number;
}

export interface BackupOptions {
  /** The schema to copy (default "main"). */
  attached?: string;
  progress?: (info: BackupMetadata) => number | undefined;
}

/** A better-sqlite3-compatible connection (the same class as `store.db`). */
export declare class Database {
  constructor(filename: string, options?: DatabaseOptions);
  readonly name: string;
  readonly open: boolean;
  readonly inTransaction: boolean;
  readonly memory: boolean;
  readonly readonly: boolean;
  prepare(sql: string): Statement;
  exec(sql: string): this;
  pragma(sql: string, options?: { simple?: boolean }): any;
  transaction<F extends (...args: any[]) => any>(fn: F): TransactionFunction<F>;
  close(): this;
  /** Only `defaultSafeIntegers(false)` is accepted. */
  defaultSafeIntegers(toggle?: boolean): this;
  /** Only `unsafeMode(false)` is accepted. */
  unsafeMode(toggle?: boolean): this;
  /** Not supported: always throws a TypeError. */
  function(...args: unknown[]): never;
  /** Not supported: always throws a TypeError. */
  aggregate(...args: unknown[]): never;
  /** Not supported: always throws a TypeError. */
  table(...args: unknown[]): never;
  /**
   * Online backup into `filename` (better-sqlite3 12's contract): resolves once the copy is
   * complete. The copy advances one step per event-loop turn; `progress` is called after
   * each step and its return value (a number) is the page count of the next step
   * (default 100, 0 pauses).
   */
  backup(filename: string, options?: BackupOptions): Promise<BackupMetadata>;
  /** The database file's bytes (`sqlite3_serialize`). */
  serialize(options?: { attached?: string }): Buffer;
  /** Not supported: always throws a TypeError. */
  loadExtension(...args: unknown[]): never;
  static readonly SqliteError: typeof SqliteError;
}

export interface Store {
  /** The better-sqlite3-compatible handle on the store's own connection. */
  db: Database;
  uuidv7(): string;
  /** Set by the hub's adapter; not set by createStore. */
  type?: string;
  [added: string]: unknown;

  close(): void;

  registerAgent(input: RegisterAgentInput): RegisterAgentResult;
  getAgent(id: string): AgentRow | null;
  refreshLease(agentId: string, ttlMs?: number): RefreshLeaseResult;
  updateAgentTopics(agentId: string, topics?: unknown): boolean;
  listOnlineAgents(): AgentRow[];
  listAllAgents(): AgentRow[];
  getAgentsByTopic(topic: string): AgentRow[];
  sweepStaleAgents(): { stale: number; offline: number };
  updateAgentStatus(agentId: string, status: 'online' | 'stale' | 'offline'): boolean;

  getRole(roleKeyWire: string): RoleRow | null;
  upsertRoleReservation(input: RoleInput): RoleResult;
  compareAndSetRole(input: RoleInput): RoleResult;
  listRoleKeys(filter?: RoleKeyFilter): string[];
  listRolesWithExpiredHolder(now: number): RoleRow[];
  listRoleCandidates(roleKeyWire: string): RoleCandidateRow[];
  upsertRoleCandidate(input: RoleInput): RoleCandidateRow;
  updateCandidateReachability(input: RoleInput): { ok: true; candidate: RoleCandidateRow } | { ok: false; reason: 'not_found' };
  listPendingRoleMessages(roleKeyWire: string, now: number): MessageRow[];
  recoverRoleRegistry(now: number): RecoveryResult;

  auditLog(input: AuditLogInput): AuditLogResult;
  enqueueMessage(input: AuditLogInput): AuditLogResult;
  getMessage(id: string): MessageRow | null;
  getResponseByCorrelation(correlationId: string): MessageRow | null;
  getMessagesByTrace(traceId: string): MessageRow[];
  updateMessageStatus(id: string, status: MessageStatus): boolean;
  getAuditMessagesForAgent(agentId: string, options?: AuditQueryOptions): MessageRow[];
  deliverToAgent(messageId: string, agentId: string): boolean;
  deliverToTopic(messageId: string, topic: string): number;
  pollForAgent(agentId: string, options?: AuditQueryOptions): MessageRow[];
  ackMessages(...args: unknown[]): 0;

  insertHumanRequest(input: HumanRequestInput): { request_id: string; state: 'pending'; deadline_ms: number };
  getHumanRequest(id: string): HumanRequestRow | null;
  updateHumanRequest(id: string, state: HumanRequestRow['state'], response?: unknown): boolean;
  getPendingHumanRequests(): HumanRequestRow[];
  expireHumanRequests(): number;

  moveToDeadLetter(messageId: string, reason: string, lastError?: string | null): true;
  getDeadLetters(limit?: number): DeadLetterRow[];

  createAssign(input: CreateAssignInput): AssignRow;
  getAssign(jobId: string): AssignRow | null;
  updateAssignStatus(jobId: string, status: AssignStatus | null | undefined, patch?: Record<string, unknown>): AssignRow | null;
  listAssigns(filter?: ListAssignsFilter): AssignRow[];
  retryAssign(jobId: string, patch?: { error?: unknown; timeout_ms?: number; ttl_ms?: number; [k: string]: unknown }): AssignRow | null;
  onAssignStatusChange(listener: (event: AssignStatusEvent, row: AssignRow) => void): () => void;

  sweepExpired(): { messages: number; human_requests: number };
  getQueueDepths(): { urgent: number; normal: number; dlq: number };
  getDeliveryStats(): { total_deliveries: number; avg_delivery_ms: 0 };
  getHubStats(): { online_agents: number; total_messages: number; active_assign_jobs: number; urgent: number; normal: number; dlq: number };
  getAuditStats(): {
    online_agents: number;
    total_messages: number;
    dlq: number;
    assign_queued: number;
    assign_running: number;
    assign_failed: number;
    assign_timed_out: number;
  };

  addReflexion(input: AddReflexionInput): ReflexionRow;
  getReflexion(id: string): ReflexionRow | null;
  findReflexion(errorPattern: string, context?: Record<string, unknown>): ReflexionRow[];
  updateReflexionHit(id: string, success?: boolean): ReflexionRow | null;
  listReflexion(filter?: { type?: string; minConfidence?: number; projectSlug?: string }): ReflexionRow[];
  patchReflexion(id: string, patch?: Partial<AddReflexionInput>): ReflexionRow | null;
  deleteReflexion(id: string): boolean;
  pruneReflexion(maxAgeMs?: number, minConfidence?: number): number;
}

export interface CreateStoreOptions {
  /** Accepted for compatibility with the original and ignored. */
  DatabaseCtor?: unknown;
}

export declare function createStore(dbPath: string, options?: CreateStoreOptions): Store;
/** RFC 9562 version-7 UUID, monotonic within the process. */
export declare function uuidv7(): string;
/** Resolves to this package's `Database` class (better-sqlite3's role in the original). */
export declare function importBetterSqlite3(): Promise<typeof Database>;
