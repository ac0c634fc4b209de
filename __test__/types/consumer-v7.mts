// The schema 7 and 8 entries' types: the generation arguments and results, `type` and
// `fingerprint`; each @ts-expect-error line must stay an error.
import { createStore as createStoreV6 } from 'triflux-native-store';
import { createStore, type AgentRow, type RegisterAgentResult, type Store } from 'triflux-native-store/v7';
import * as v8 from 'triflux-native-store/v8';

const store: Store = createStore('hub.db');
const registered: RegisterAgentResult = store.registerAgent({ agent_id: 'a', cli: 'codex' });
const generation: number | null = registered.presence_generation;
const fingerprint: string = registered.effective.store_fingerprint;
const refreshed: boolean = store.refreshLease('a', 30000, generation).effective.updated;
const kept: boolean = store.updateAgentStatus('a', 'stale', generation ?? undefined);
const row: AgentRow | null = store.getAgent('a');
const rowGeneration: number | undefined = row?.presence_generation;
const kind: 'sqlite' = store.type;
const same: boolean = store.fingerprint === fingerprint;

const store8: v8.Store = v8.createStore('hub.db');
const refreshed8: string = store8.refreshLease('a', 1000, 2).effective.store_fingerprint;
const phantoms = store8.recoverRoleRegistry(Date.now()).roles.filter((role) => role.state === 'active');

// @ts-expect-error the fingerprint is read-only
store.fingerprint = 'sqlite:other';
// @ts-expect-error a schema 6 store takes no generation
createStoreV6('hub.db').refreshLease('a', 30000, 1);
// @ts-expect-error a schema 6 result has no presence_generation
createStoreV6('hub.db').registerAgent({ agent_id: 'a', cli: 'codex' }).presence_generation;
// @ts-expect-error a generation is not an object
store.updateAgentStatus('a', 'online', { generation: 1 });

void [refreshed, kept, rowGeneration, kind, same, refreshed8, phantoms];
