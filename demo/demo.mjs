// `npm start`: a short tour of the native store on a database file kept under the
// package's own folder (demo/data/hub.db by default; pass another path as argument).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createStore } from '../index.mjs';

const dbPath = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'data', 'hub.db');
const store = createStore(dbPath);
const has = (name) => typeof store[name] === 'function';

console.log(`triflux-native-store demo on ${dbPath}`);
const worker = store.registerAgent({ agent_id: 'demo-worker', cli: 'codex', topics: ['build'], capabilities: ['code'] });
store.registerAgent({ agent_id: 'demo-lead', cli: 'claude', topics: ['review'] });
console.log('registered demo-worker, lease until', new Date(worker.lease_expires_ms).toISOString());

const request = store.auditLog({ type: 'request', from: 'demo-lead', to: 'demo-worker', topic: 'build', payload: { task: 'compile' } });
store.auditLog({ type: 'event', from: 'demo-lead', to: 'topic:build', topic: 'build', priority: 8, payload: { note: 'broadcast' } });
store.auditLog({ type: 'response', from: 'demo-worker', to: 'demo-lead', topic: 'build', correlation_id: request.correlation_id, payload: { ok: true } });
console.log('replay for demo-worker:', store.getAuditMessagesForAgent('demo-worker').map((m) => `${m.type}:${m.topic}`).join(', '));
console.log('response to the request:', JSON.stringify(store.getResponseByCorrelation(request.correlation_id).payload));

if (has('createAssign')) {
  // The whole id: a UUIDv7 starts with its timestamp, so a prefix looks the same from run to run.
  store.onAssignStatusChange((event) => console.log(`assign ${event.job_id} -> ${event.status}`));
  const job = store.createAssign({ supervisor_agent: 'demo-lead', worker_agent: 'demo-worker', task: 'compile', payload: { target: 'all' } });
  store.updateAssignStatus(job.job_id, 'running');
  store.updateAssignStatus(job.job_id, 'succeeded', { result: { artifacts: 3 } });
}

if (has('upsertRoleReservation')) {
  const wire = 'rk2.' + Buffer.from(JSON.stringify({ project_id: 'prj_DemoProjectAlpha000000', role_kind: 'cto' })).toString('base64url');
  const current = store.getRole(wire);
  const reserved = store.upsertRoleReservation({
    role_key_wire: wire,
    holder_agent_id: 'demo-lead',
    holder_lease_expires_ms: Date.now() + 60000,
    ...(current ? { expected_version: current.version, expected_epoch: current.epoch } : {}),
  });
  console.log(`CTO role: ${reserved.ok ? reserved.role.state : reserved.reason} (epoch ${reserved.role?.epoch})`);
}

console.log('hub stats:', JSON.stringify(store.getHubStats()));
store.close();
console.log(`look into the file: npx triflux-store info ${dbPath}   (npx triflux-store --help: stats, agents, tail, check, backup…)`);
