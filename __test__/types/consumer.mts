// Type test (tsc --strict --noEmit, see __test__/types.test.mjs): a consumer that calls
// every store method and the better-sqlite3 facade the way the hub does, and the
// mistakes the types must reject, each under @ts-expect-error (tsc fails if one of
// them stops being an error).
import { createStore, uuidv7, importBetterSqlite3, version, readStats, Database, SqliteError } from 'triflux-native-store';
import type { AgentRow, AssignRow, MessageRow, RoleResult, RunResult, Statement, Store, StoreStats, VersionInfo } from 'triflux-native-store';
import BetterSqlite3, { SqliteError as SubpathSqliteError } from 'triflux-native-store/better-sqlite3';

const store: Store = createStore('/tmp/hub.db', { DatabaseCtor: null });
const id: string = uuidv7() + store.uuidv7();
const info: VersionInfo = version();
const versions: string = `${info.version} ${info.sqlite} ${info.target} ${info.binary}`;

// --- agents ---
const reg = store.registerAgent({ agent_id: 'a1', cli: 'codex', pid: 1, topics: ['t'], heartbeat_ttl_ms: 1000, metadata: {} });
const leaseId: string = reg.lease_id;
const agent: AgentRow | null = store.getAgent('a1');
store.refreshLease('a1', 5000);
const topicsUpdated: boolean = store.updateAgentTopics('a1', ['x']);
const online: AgentRow[] = [...store.listOnlineAgents(), ...store.listAllAgents(), ...store.getAgentsByTopic('x')];
const swept: number = store.sweepStaleAgents().stale;
store.updateAgentStatus('a1', 'offline');

// --- messages, human requests, dead letters, stats ---
const msg = store.auditLog({ type: 'request', from: 'a1', to: 'a2', topic: 't', payload: { q: 1 } });
const payloadText: string = msg.payload_json;
store.enqueueMessage({ type: 'event', from: 'a1', to: 'topic:t', topic: 't', priority: 9, status: 'queued' });
const got: MessageRow | null = store.getMessage(msg.id) ?? store.getResponseByCorrelation(msg.correlation_id);
const traced: MessageRow[] = store.getMessagesByTrace(msg.trace_id);
store.updateMessageStatus(msg.id, 'acked');
store.getAuditMessagesForAgent('a1', { max_messages: 5, include_topics: ['t'] });
store.deliverToAgent(msg.id, 'a1');
const delivered: number = store.deliverToTopic(msg.id, 't');
store.pollForAgent('a1');
const acked: 0 = store.ackMessages();
const hr = store.insertHumanRequest({
  requester_agent: 'a1',
  kind: 'approval',
  prompt: 'ok?',
  deadline_ms: 1000,
  default_action: 'decline',
});
store.getHumanRequest(hr.request_id);
store.updateHumanRequest(hr.request_id, 'accepted', { yes: true });
store.getPendingHumanRequests();
const expired: number = store.expireHumanRequests();
store.moveToDeadLetter(msg.id, 'ttl', null);
store.getDeadLetters(10);
const sweep: { messages: number; human_requests: number } = store.sweepExpired();
const depths: number = store.getQueueDepths().dlq + store.getDeliveryStats().total_deliveries;
const hub: number = store.getHubStats().online_agents + store.getAuditStats().assign_failed;

// --- assign jobs ---
const job: AssignRow = store.createAssign({ supervisor_agent: 's', worker_agent: 'w', task: 'do', timeout_ms: 1000 });
store.getAssign(job.job_id);
store.updateAssignStatus(job.job_id, 'running', { started_at_ms: Date.now(), result: { partial: true } });
store.listAssigns({ statuses: ['queued', 'running'], limit: 10 });
store.retryAssign(job.job_id, { error: 'boom', timeout_ms: 2000 });
const unsubscribe: () => void = store.onAssignStatusChange((event, row) => void [event.status, row.job_id]);
unsubscribe();

// --- reflexion ---
const rx = store.addReflexion({ error_pattern: 'E1', error_message: 'bad', solution: 'fix', context: { projectSlug: 'p' } });
store.getReflexion(rx.id);
store.findReflexion('E1', { projectSlug: 'p' });
store.updateReflexionHit(rx.id, true);
store.listReflexion({ type: 'reflexion', minConfidence: 0.1 });
store.patchReflexion(rx.id, { confidence: 0.9 });
const deleted: boolean = store.deleteReflexion(rx.id);
const pruned: number = store.pruneReflexion(1000, 0.1);

// --- role registry ---
const wire = 'role:prj_x:cto';
store.getRole(wire);
const reserved: RoleResult = store.upsertRoleReservation({ role_key_wire: wire, holder_agent_id: 'a1', expected_version: 1 });
if (reserved.ok) {
  const r = reserved.role;
  store.compareAndSetRole({
    role_key_wire: wire,
    expected_version: r.version,
    expected_epoch: r.epoch,
    expected_activation_seq: r.activation_seq,
    expected_activation_id: r.activation_id,
    patch: { state: 'active', holder_lease_expires_ms: Date.now() + 1000 },
  });
}
const keys: string[] = store.listRoleKeys({ states: ['active'] });
store.listRolesWithExpiredHolder(Date.now());
store.listRoleCandidates(wire);
store.upsertRoleCandidate({ roleKeyWire: wire, agent_id: 'a1', source: 'grant', priority: 1 });
const reach = store.updateCandidateReachability({ role_key_wire: wire, agent_id: 'a1', probe_failed: true });
if (reach.ok) void reach.candidate.consecutive_probe_failures;
store.listPendingRoleMessages(wire, Date.now());
const recovered = store.recoverRoleRegistry(Date.now()).roles.length;

// --- the facade, as @types/better-sqlite3 code uses it ---
interface Meta {
  key: string;
  value: string;
}
const db = store.db;
const metaStmt: Statement<[string], Meta> = db.prepare<[string], Meta>('SELECT key, value FROM meta WHERE key = ?');
const meta: Meta | undefined = metaStmt.get('schema');
const metas: Meta[] = metaStmt.all('schema');
for (const row of metaStmt.iterate('schema')) void row.value;
const named = db.prepare<{ key: string }, Meta>('SELECT key, value FROM meta WHERE key = @key');
named.get({ key: 'schema' });
const untyped: unknown = db.prepare('SELECT 1').get();
const run = db.prepare('DELETE FROM meta WHERE key = ?').run('x');
const changes: number = run.changes + Number(run.lastInsertRowid);
const cols: string[] = metaStmt.columns().map((c) => c.name);
const pragma: unknown = db.pragma('journal_mode', { simple: true });
const tx = db.transaction((n: number) => n + 1);
const txResult: number = tx(1) + tx.immediate(2) + tx.deferred(3) + tx.exclusive(4);
db.exec('SELECT 1').pragma('user_version');
const backedUp: number = (await db.backup('/tmp/copy.db', { progress: (info) => (info.remainingPages > 0 ? 100 : undefined) })).totalPages;
const bytes: Buffer = db.serialize();
db.function('add', (a: number, b: number) => a + b).function('any', { varargs: true, deterministic: true }, (...xs: unknown[]) => xs.length);
db.aggregate<number>('total', { start: 0, step: (t, x: number) => t + x, inverse: (t, x: number) => t - x, result: (t) => t });
db.table('seq', { columns: ['n'], parameters: ['count'], *rows(count: number) { for (let n = 0; n < count; n++) yield [n]; } });
db.table('csv', function (...args: string[]) {
  const table: string = this.table;
  return { columns: args.length ? args : [table], *rows() { yield { [table]: 1 }; } };
});

const other = new Database('/tmp/other.db', { readonly: true, fileMustExist: true, timeout: 100 });
const flags: boolean = other.open && other.readonly && !other.memory && !other.inTransaction;
other.close();
new Database('/tmp/other.db', { readonly: true, immutable: true }).close();
const stats: StoreStats = readStats('/tmp/other.db', { timeout: 100, immutable: false });
const statTotals: number = stats.hub.total_messages + stats.audit.assign_failed + stats.queue_depths.dlq + stats.delivery.total_deliveries;
const viaImport: typeof Database = await importBetterSqlite3();
const bridgeDb = new BetterSqlite3('/tmp/hub.db', { readonly: true });
bridgeDb.close();
const e1: SqliteError = new BetterSqlite3.SqliteError('m', 'SQLITE_BUSY');
const e2: SqliteError = new SubpathSqliteError('m', 'SQLITE_BUSY');
const code: string = e1.code + e2.code;
const e3: SqliteError = SqliteError('m', 'SQLITE_ERROR');
const isSqliteError: boolean = e3 instanceof SqliteError && e3 instanceof Error;
const logged: string[] = [];
const fromBytes = new Database(bytes, { readonly: true, verbose: (sql) => logged.push(String(sql)) });
const big: RunResult['lastInsertRowid'] = fromBytes.defaultSafeIntegers().unsafeMode(false).prepare('SELECT 1').safeIntegers().run().lastInsertRowid;
fromBytes.loadExtension('/tmp/ext.so', 'sqlite3_ext_init').close();
new Database().close();
store.close();

// --- mistakes the types must reject ---
// @ts-expect-error misspelt field: heartbeat_ttl (it is heartbeat_ttl_ms)
store.registerAgent({ agent_id: 'a', cli: 'codex', heartbeat_ttl: 1000 });
// @ts-expect-error misspelt field: expected_verison
store.compareAndSetRole({ role_key_wire: wire, expected_verison: 1, patch: { state: 'active' } });
// @ts-expect-error patch.state must be a RoleState
store.compareAndSetRole({ role_key_wire: wire, expected_version: 1, patch: { state: 'running' } });
// @ts-expect-error state must be a RoleState in a reservation too
store.upsertRoleReservation({ role_key_wire: wire, state: 'idle' });
// @ts-expect-error misspelt field in a candidate
store.upsertRoleCandidate({ role_key_wire: wire, agent_id: 'a', prioritty: 1 });
// @ts-expect-error misspelt patch field for updateAssignStatus
store.updateAssignStatus(job.job_id, 'failed', { erorr: 'x' });
// @ts-expect-error an assign status that does not exist
store.listAssigns({ status: 'done' });
// @ts-expect-error an aggregate needs its step
db.aggregate('sum', { start: 0 });
// @ts-expect-error a table's rows come from a generator
db.table('t', { columns: ['a'], rows: () => [[1]] });
// @ts-expect-error an entry point is a string
db.loadExtension('/tmp/ext.so', 1);
// @ts-expect-error safeIntegers takes a boolean
metaStmt.safeIntegers('yes');
// @ts-expect-error bind parameters are checked against prepare's type arguments
metaStmt.get(42);
// @ts-expect-error rows are unknown until typed
untyped.value;
// @ts-expect-error pragma results are unknown until narrowed
pragma.length;
// @ts-expect-error the readonly option is spelt readonly
new Database('/tmp/x.db', { readOnly: true });
// @ts-expect-error readStats' statistics are typed: there is no hub.total
readStats('/tmp/x.db').hub.total;

void [id, versions, leaseId, agent, topicsUpdated, online, swept, payloadText, got, traced, delivered, acked, expired];
void [sweep, depths, hub, deleted, pruned, keys, recovered, meta, metas, changes, cols, txResult, flags, viaImport, code, backedUp, bytes, statTotals];
