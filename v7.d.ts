// Public API of triflux-native-store/v7: the triflux hub store of schema "7". What is not
// declared here is as in the root entry (index.d.ts, schema "6"): schema 7 adds presence
// generations (a stale agent's heartbeat and status writes change nothing), and the
// store's `type` and `fingerprint`.
import type * as V6 from './index.js';

export * from './index.js';

export interface AgentRow extends V6.AgentRow {
  /** Bumped by every registerAgent of the agent; 0 for a row a v6 file had. In a fresh
   * file it follows lease_expires_ms in the row, in a migrated one it comes last. */
  presence_generation: number;
}

export interface RegisterAgentResult extends Omit<V6.RegisterAgentResult, 'effective'> {
  /** The generation the agent now has (null if the row could not be read back). */
  presence_generation: number | null;
  effective: V6.RegisterAgentResult['effective'] & { store_fingerprint: string };
}

export interface RefreshLeaseResult extends Omit<V6.RefreshLeaseResult, 'effective'> {
  effective: V6.RefreshLeaseResult['effective'] & { store_fingerprint: string };
}

/** A generation as registerAgent returned it; anything else (undefined included) matches no row. */
export type PresenceGeneration = number | bigint | string | null | undefined;

type V6AgentMembers =
  | 'type'
  | 'registerAgent'
  | 'getAgent'
  | 'refreshLease'
  | 'listOnlineAgents'
  | 'listAllAgents'
  | 'getAgentsByTopic'
  | 'updateAgentStatus';

export interface Store extends Omit<V6.Store, V6AgentMembers> {
  readonly type: 'sqlite';
  /** `"sqlite:" + sha256(String(dbPath))` in hex: the path as passed to createStore. */
  readonly fingerprint: string;

  registerAgent(input: V6.RegisterAgentInput): RegisterAgentResult;
  getAgent(id: string): AgentRow | null;
  /** Writes only the row of `presenceGeneration`; `effective.updated` says whether it did. */
  refreshLease(agentId: string, ttlMs?: number, presenceGeneration?: PresenceGeneration): RefreshLeaseResult;
  listOnlineAgents(): AgentRow[];
  listAllAgents(): AgentRow[];
  getAgentsByTopic(topic: string): AgentRow[];
  /** False when the agent has another generation (or none was given). */
  updateAgentStatus(agentId: string, status: 'online' | 'stale' | 'offline', presenceGeneration?: PresenceGeneration): boolean;
}

export declare function createStore(dbPath: string, options?: V6.CreateStoreOptions): Store;
/** The store's checkpointer status; null when its file has none (in memory, not in WAL mode). */
export declare function checkpointStatus(store: Store): V6.CheckpointStatus | null;
