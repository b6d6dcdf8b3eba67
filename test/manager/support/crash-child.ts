// One process of the audit crash tests, bundled by esbuild and run by plain `node`: a KeyManager over
// the store it is given makes every kind of key change, round after round, in one account: create,
// update, suspend, resume, rotate, revoke the rotated key, import. With `killAtEvent` n, its onEvent
// hook SIGKILLs this process when the n-th key event arrives: the hook runs once the key write
// succeeded, before an audit entry the write did not carry is appended, so the kill falls between
// the two writes. Without it, it writes until the test kills it. Says `ready`, then waits for `go`.
import { createInterface } from 'node:readline';
import { generateKey, KeyManager } from 'keygate';
import { type CrashBackend, openCrashStore } from './crash-stores.js';

interface Args {
  backend: CrashBackend;
  accountId: string;
  /** The key event (1 = the first) during whose hook the process kills itself. @default undefined (never) */
  killAtEvent?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const { store } = await openCrashStore(args.backend);
let events = 0;
const keys = new KeyManager({
  store,
  onEvent: (event) => {
    if (!event.type.startsWith('key.')) return;
    events++;
    if (events === args.killAtEvent) process.kill(process.pid, 'SIGKILL');
  },
});
say({ event: 'ready' });
await lines.next();

const accountId = args.accountId;
for (let round = 0; round < 100_000; round++) {
  const { key } = await keys.create({ accountId, name: `key ${round}`, mode: 'test', permissions: ['email:verify'] });
  await keys.update(key.id, { name: `key ${round} renamed`, allowedIps: ['203.0.113.0/24'] });
  await keys.suspend(key.id, { reason: 'unpaid invoice' });
  await keys.resume(key.id, { actor: { type: 'cli', id: 'alice' } });
  await keys.rotate(key.id);
  await keys.revoke(key.id, { actor: { type: 'dashboard', id: accountId }, address: '203.0.113.7' });
  await keys.import({ accountId, name: `imported ${round}`, secret: generateKey({ mode: 'test' }) });
}
say({ event: 'done' });
process.exit(0);
