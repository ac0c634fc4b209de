// Public API of triflux-native-store: the triflux hub store (schema "6").
// Shapes follow the original hub/store.mjs exactly, key order included.
// Nothing here needs @types/node: a consumer type-checks without it.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** better-sqlite3's error: `name` is "SqliteError", `code` the SQLite result code name. */
export interface SqliteError extends Error {
  name: string;
  code: string;
}

/** better-sqlite3's `SqliteError`, callable with or without `new`. */
export interface SqliteErrorConstructor {
  new (message: string, code: string): SqliteError;
  (message: string, code: string): SqliteError;
  readonly prototype: SqliteError;
}

export declare const SqliteError: SqliteErrorConstructor;

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

/** The fields updateAssignStatus may change besides the status. */
export interface AssignPatch {
  supervisor_agent?: string;
  worker_agent?: string;
  topic?: string;
  task?: string;
  payload?: unknown;
  attempt?: number;
  retry_count?: number;
  max_retries?: number;
  priority?: number;
  ttl_ms?: number;
  timeout_ms?: number;
  deadline_ms?: number | null;
  trace_id?: string;
  correlation_id?: string;
  last_message_id?: string | null;
  result?: unknown;
  error?: unknown;
  started_at_ms?: number | null;
  dispatched_at_ms?: number | null;
  completed_at_ms?: number | null;
  last_retry_at_ms?: number | null;
}

export interface RetryAssignPatch {
  retry_count?: number;
  attempt?: number;
  timeout_ms?: number;
  ttl_ms?: number;
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

/**
 * The role key every role input carries: `role_key_wire` (or `roleKeyWire`); project_id,
 * role_kind and scope_id, when given, must match the key (else "role key identity mismatch").
 */
export interface RoleKeyInput {
  role_key_wire?: string;
  roleKeyWire?: string;
  project_id?: string;
  role_kind?: 'cto' | 'lead';
  scope_id?: string;
}

/** The role columns a reservation or a compare-and-set may write. */
export interface RoleFields {
  state?: RoleState;
  holder_agent_id?: string | null;
  previous_holder_agent_id?: string | null;
  activation_id?: string | null;
  activation_deadline_ms?: number | null;
  holder_lease_expires_ms?: number | null;
  charter_version?: string | null;
  charter_acked_epoch?: number | null;
  retry_count?: number;
  next_probe_ms?: number | null;
  blocked_reason?: string | null;
  last_transition_ms?: number;
  last_reason?: string;
}

/** upsertRoleReservation: optimistic checks against the current row, then the new values. */
export interface ReserveRoleInput extends RoleKeyInput, RoleFields {
  expected_version?: number;
  expectedVersion?: number;
  expected_epoch?: number;
  expectedEpoch?: number;
  epoch?: number;
  next_epoch?: number;
  activation_seq?: number;
  next_activation_seq?: number;
}

/** compareAndSetRole: the expected version, epoch, activation_seq and activation_id, and a patch. */
export interface CompareAndSetRoleInput extends RoleKeyInput {
  expected_version?: number;
  expectedVersion?: number;
  version?: number;
  expected_epoch?: number;
  expectedEpoch?: number;
  epoch?: number;
  expected_activation_seq?: number;
  expectedActivationSeq?: number;
  activation_seq?: number;
  expected_activation_id?: string | null;
  expectedActivationId?: string | null;
  activation_id?: string | null;
  patch?: RoleFields | null;
  /** Read when `patch` is null or absent. */
  changes?: RoleFields | null;
}

export interface RoleCandidateInput extends RoleKeyInput {
  agent_id: string;
  source?: RoleCandidateRow['source'];
  priority?: number;
  transport_locators?: unknown;
  consecutive_probe_failures?: number;
  excluded_until_ms?: number | null;
  last_probe_ms?: number | null;
  last_probe_code?: string | null;
  updated_at_ms?: number;
}

export interface CandidateReachabilityInput extends RoleKeyInput {
  agent_id: string;
  consecutive_probe_failures?: number;
  /** Either flag adds one failure; `probe_succeeded` resets the count. */
  probe_failed?: boolean;
  increment_probe_failures?: boolean;
  probe_succeeded?: boolean;
  excluded_until_ms?: number | null;
  last_probe_ms?: number;
  last_probe_code?: string | null;
  updated_at_ms?: number;
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
  /** A bigint when the statement reads safe integers (`safeIntegers()`), else a number. */
  lastInsertRowid: number | bigint;
}

export interface ColumnDefinition {
  name: string;
  column: string | null;
  table: string | null;
  database: string | null;
  type: string | null;
}

/**
 * A prepared statement. As in @types/better-sqlite3, `BindParameters` is the tuple of
 * arguments run/get/all/iterate/bind take and `Result` the row type; both are the
 * caller's claim, not checked against the SQL.
 */
export interface Statement<BindParameters extends unknown[] = unknown[], Result = unknown> {
  readonly source: string;
  readonly reader: boolean;
  readonly readonly: boolean;
  readonly database: Database;
  /** True while an iterate() of this statement is open. */
  readonly busy: boolean;
  run(...params: BindParameters): RunResult;
  get(...params: BindParameters): Result | undefined;
  all(...params: BindParameters): Result[];
  iterate(...params: BindParameters): IterableIterator<Result>;
  pluck(toggle?: boolean): this;
  raw(toggle?: boolean): this;
  expand(toggle?: boolean): this;
  bind(...params: BindParameters): this;
  columns(): ColumnDefinition[];
  /** INTEGER values (and `lastInsertRowid`) as bigint; the default is the database's. */
  safeIntegers(toggle?: boolean): this;
}

export interface TransactionFunction<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  default(...args: Parameters<F>): ReturnType<F>;
  deferred(...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
  exclusive(...args: Parameters<F>): ReturnType<F>;
  readonly database: Database;
}

export interface DatabaseOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  timeout?: number;
  /** Called with each statement's SQL (bound values written in) before it runs. */
  verbose?: ((message?: unknown, ...additionalArgs: unknown[]) => void) | null;
  /** Checked as better-sqlite3 checks it, then ignored: the binding is this package's own. */
  nativeBinding?: string | object | null;
  /**
   * This package's addition (with `readonly`): SQLite's `immutable=1` open, which reads the
   * file as it is on disk, without locks, `-wal` or `-shm`. For a file that cannot be
   * share-locked (a directory you cannot write, read-only media) and has no `-wal` to read;
   * a change made to the file meanwhile is not seen consistently.
   */
  immutable?: boolean;
}

/**
 * Node's `Buffer` where Node's types are loaded, else `Uint8Array` (which a Buffer is), so
 * that these types need nothing from @types/node.
 */
export type NodeBuffer = typeof globalThis extends { Buffer: { alloc(size: number): infer B } } ? B : Uint8Array;

export interface BackupMetadata {
  totalPages: number;
  remainingPages: number;
}

export interface BackupOptions {
  /** The schema to copy (default "main"). */
  attached?: string;
  progress?: (info: BackupMetadata) => number | undefined;
}

/** Options of `db.function()` (better-sqlite3's, all false by default). */
export interface FunctionOptions {
  /** Any number of arguments (else exactly `fn.length`). */
  varargs?: boolean;
  /** Same arguments, same result: SQLite may use it in indexes and factor calls out. */
  deterministic?: boolean;
  /** Only from top-level SQL: not in views, triggers, CHECK or DEFAULT clauses. */
  directOnly?: boolean;
  /** INTEGER arguments as BigInt (the default is the connection's). */
  safeIntegers?: boolean;
}

/** Options of `db.aggregate()`. */
export interface AggregateOptions<T = unknown> extends FunctionOptions {
  /** The initial value, or a function returning it for each group (default null). */
  start?: T | (() => T);
  /** The new value from the current one and a row's arguments (undefined keeps it). */
  step: (total: T, ...args: any[]) => T | void;
  /** Removes a row from a window frame: makes the aggregate a window function. */
  inverse?: (total: T, ...args: any[]) => T | void;
  /** The SQL result from the value (default: the value itself). */
  result?: (total: T) => unknown;
}

/** A virtual table of `db.table()`. */
export interface VirtualTableDefinition {
  /** The column names. */
  columns: string[];
  /** Yields each row as an array (in column order) or as an object keyed by column. */
  rows: (...parameters: any[]) => Generator<unknown[] | Record<string, unknown>, void, undefined>;
  /** The table-valued parameters, hidden columns (default `$1`... by `rows.length`). */
  parameters?: string[];
  /** INTEGER parameters as BigInt (the default is the connection's). */
  safeIntegers?: boolean;
  /** Only from top-level SQL: not in views or triggers. */
  directOnly?: boolean;
}

/** `this` of a `db.table()` factory: what the `CREATE VIRTUAL TABLE` statement named. */
export interface VirtualTableContext {
  module: string;
  database: string;
  table: string;
}

/** A better-sqlite3-compatible connection (the same class as `store.db`). */
export declare class Database {
  /** A file, `":memory:"` or `""` (temporary), or the bytes of `serialize()` (in memory). */
  constructor(filename?: string | Uint8Array, options?: DatabaseOptions);
  readonly name: string;
  readonly open: boolean;
  readonly inTransaction: boolean;
  readonly memory: boolean;
  readonly readonly: boolean;
  /**
   * `prepare<[string], Row>(sql)` as with @types/better-sqlite3; a single object type
   * for named parameters (`prepare<{ id: string }, Row>`) means one object argument.
   */
  prepare<BindParameters extends unknown[] | {} = unknown[], Result = unknown>(
    sql: string,
  ): BindParameters extends unknown[] ? Statement<BindParameters, Result> : Statement<[BindParameters], Result>;
  exec(sql: string): this;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<F extends (...args: never[]) => unknown>(fn: F): TransactionFunction<F>;
  close(): this;
  /** Whether statements prepared from now on read INTEGER values as bigint. */
  defaultSafeIntegers(toggle?: boolean): this;
  /** Allows writes while iterating and turns SQLite's DEFENSIVE mode off. */
  unsafeMode(toggle?: boolean): this;
  /** Loads a compiled SQLite extension (`sqlite3_load_extension`). */
  loadExtension(path: string, entryPoint?: string): this;
  /**
   * A JS function callable from SQL (better-sqlite3 12's `db.function`): it takes as many
   * arguments as `fn.length` says (any number with `varargs`), runs inside the statement
   * that calls it, and its throw is what that statement call throws.
   */
  function(name: string, fn: (...args: any[]) => unknown): this;
  function(name: string, options: FunctionOptions | null | undefined, fn: (...args: any[]) => unknown): this;
  /** A JS aggregate, and a window function when `inverse` is given (better-sqlite3's `db.aggregate`). */
  aggregate<T = unknown>(name: string, options: AggregateOptions<T>): this;
  /**
   * A read-only virtual table whose rows a generator yields (better-sqlite3's `db.table`):
   * a definition makes the table `name` itself; a factory makes one table per
   * `CREATE VIRTUAL TABLE t USING name(args)`, called with those arguments.
   */
  table(name: string, definition: VirtualTableDefinition): this;
  table(name: string, factory: (this: VirtualTableContext, ...args: string[]) => VirtualTableDefinition): this;
  /**
   * Online backup into `filename` (better-sqlite3 12's contract): resolves once the copy is
   * complete. The copy advances one step per event-loop turn; `progress` is called after
   * each step and its return value (a number) is the page count of the next step
   * (default 100, 0 pauses).
   */
  backup(filename: string, options?: BackupOptions): Promise<BackupMetadata>;
  /** The database file's bytes (`sqlite3_serialize`). */
  serialize(options?: { attached?: string }): NodeBuffer;
  static readonly SqliteError: typeof SqliteError;
}

export interface Store {
  /** The better-sqlite3-compatible handle on the store's own connection. */
  db: Database;
  uuidv7(): string;
  /** Set by the hub's adapter; not set by createStore. */
  type?: string;

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
  upsertRoleReservation(input: ReserveRoleInput): RoleResult;
  compareAndSetRole(input: CompareAndSetRoleInput): RoleResult;
  listRoleKeys(filter?: RoleKeyFilter): string[];
  listRolesWithExpiredHolder(now: number): RoleRow[];
  listRoleCandidates(roleKeyWire: string): RoleCandidateRow[];
  upsertRoleCandidate(input: RoleCandidateInput): RoleCandidateRow;
  updateCandidateReachability(input: CandidateReachabilityInput): { ok: true; candidate: RoleCandidateRow } | { ok: false; reason: 'not_found' };
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
  updateAssignStatus(jobId: string, status: AssignStatus | null | undefined, patch?: AssignPatch): AssignRow | null;
  listAssigns(filter?: ListAssignsFilter): AssignRow[];
  retryAssign(jobId: string, patch?: RetryAssignPatch): AssignRow | null;
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

export interface VersionInfo {
  /** This package's version (package.json). */
  version: string;
  /** The SQLite library compiled into the binary, e.g. "3.50.4". */
  sqlite: string;
  /** The platform triple the loaded binary was built for, e.g. "linux-x64-gnu". */
  target: string;
  /** Where the binary was loaded from: a file path or the platform package's name. */
  binary: string;
}

/** Versions of this package, its SQLite and its binary; throws like createStore if the binary cannot load. */
export declare function version(): VersionInfo;

/** What `readStats` returns: the four statistics as the store's methods return them. */
export interface StoreStats {
  hub: ReturnType<Store['getHubStats']>;
  audit: ReturnType<Store['getAuditStats']>;
  queue_depths: ReturnType<Store['getQueueDepths']>;
  delivery: ReturnType<Store['getDeliveryStats']>;
}

export interface ReadStatsOptions {
  /** How long to wait for a lock held by the hub, in ms (default 5000). */
  timeout?: number;
  /** Open the file with SQLite's `immutable=1` (see `DatabaseOptions.immutable`). */
  immutable?: boolean;
}

/**
 * The store's getHubStats, getAuditStats, getQueueDepths and getDeliveryStats of a hub
 * file, read from outside the hub: one read-only connection that never migrates or writes
 * the file, all four in one read transaction (one state of the file, also while the hub
 * writes). Throws a `SqliteError` when the file cannot be read (no such file, not a
 * database, a schema without the store's tables).
 */
export declare function readStats(filename: string, options?: ReadStatsOptions): StoreStats;

/** What a store's background checkpointer has done (docs/writes.md). */
export interface CheckpointStatus {
  /** The checkpoint thread runs. */
  running: boolean;
  /** `wal_autocheckpoint` in pages, as `store.db` reads it (0: automatic checkpoints off). */
  autocheckpoint: number;
  checkpoints: number;
  /** WAL restarts done by the checkpoint thread. */
  restarts: number;
  /** RESTART checkpoints that readers kept from completing within their wait (retried). */
  busy: number;
  /** Checkpoints that failed (a full disk, an I/O error); the WAL kept every frame. */
  failures: number;
  lastError?: string;
  walPeakBytes: number;
  walFrames: number;
  backfilledFrames: number;
  /** The WAL size from which the thread restarts the WAL, and the documented bound. */
  restartAtBytes: number;
  boundBytes: number;
}

/** The store's checkpointer status; null when its file has none (in memory, not in WAL mode). */
export declare function checkpointStatus(store: Store): CheckpointStatus | null;
