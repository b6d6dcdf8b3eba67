// One of the processes of the usage test, bundled by esbuild and run by plain `node`: sends a known
// mix of requests for one key through authenticate with a UsageRecorder that flushes every 50 ms,
// then closes the recorder (the clean shutdown that must lose nothing).
import { authenticate, CachedKeyStore, UsageRecorder } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  kind: 'postgres' | 'redis';
  url: string;
  namespace: string;
  secret: string;
  allowed: number;
  wrongAddress: number;
  missingPermission: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;

async function open() {
  if (args.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: args.url, max: 4 });
    return { store: new PostgresKeyStore({ client: pool, schema: args.namespace }), end: () => pool.end() };
  }
  const client = await createClient({ url: args.url }).connect();
  return { store: new RedisKeyStore({ client, prefix: args.namespace }), end: async () => client.destroy() };
}

const { store, end } = await open();
const cached = new CachedKeyStore(store);
const usage = new UsageRecorder({ store, intervalMs: 50 });
const send = (ip: string, permissions: string[]) =>
  authenticate({ headers: { 'x-api-key': args.secret }, ip }, cached, { permissions, onResult: usage.record });
const plan: Array<() => Promise<unknown>> = [
  ...Array.from({ length: args.allowed }, () => () => send('203.0.113.7', ['email:verify'])),
  ...Array.from({ length: args.wrongAddress }, () => () => send('198.51.100.7', ['email:verify'])),
  ...Array.from({ length: args.missingPermission }, () => () => send('203.0.113.7', ['contacts:find'])),
];
// Interleave the outcomes and pace them so that several timed flushes happen mid-run.
plan.sort(() => Math.random() - 0.5);
for (const [i, step] of plan.entries()) {
  await step();
  if (i % 100 === 0) await new Promise((r) => setTimeout(r, 5));
}
await usage.close();
cached.close();
store.close();
await end();
process.stdout.write(`${JSON.stringify({ done: plan.length })}\n`);
