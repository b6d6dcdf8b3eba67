// One side of the cross-process revocation test, bundled by esbuild and run by plain `node`.
//   watch:  holds a CachedKeyStore (TTL 60 s) and authenticates the key every millisecond; prints when
//           the channel delivers a change and when the key is first refused.
//   revoke: revokes the key and prints when it started and when the revoke returned.
//   suspend, resume: the same for a suspension and a resumption.
//   With `untilAllowed`, the watcher carries on after the refusal until the key is allowed again.
import { authenticate, CachedKeyStore, KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  role: 'watch' | 'revoke' | 'suspend' | 'resume';
  kind: 'postgres' | 'redis';
  url: string;
  /** Schema (postgres) or key prefix (redis). */
  namespace: string;
  secret?: string;
  id?: string;
  untilAllowed?: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function open(): Promise<{ store: PostgresKeyStore | RedisKeyStore; end: () => Promise<void> }> {
  if (args.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: args.url, max: 4 });
    return { store: new PostgresKeyStore({ client: pool, schema: args.namespace }), end: () => pool.end() };
  }
  const client = await createClient({ url: args.url }).connect();
  return {
    store: new RedisKeyStore({ client, prefix: args.namespace }),
    end: async () => client.destroy(),
  };
}

const { store, end } = await open();
if (args.role !== 'watch') {
  const startedAt = now();
  await new KeyManager({ store })[args.role](args.id as string);
  const done = { revoke: 'revoked', suspend: 'suspended', resume: 'resumed' }[args.role];
  say({ event: done, startedAt, returnedAt: now() });
} else {
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const off = store.subscribe((change) => {
    if (change.type === 'updated') say({ event: 'channel' });
  });
  const request = { headers: { 'x-api-key': args.secret as string }, ip: '203.0.113.7' };
  let ready = false;
  let refused = false;
  for (;;) {
    const result = await authenticate(request, cached);
    const at = now();
    if (result.ok && !ready) {
      ready = true;
      say({ event: 'ready' });
    } else if (!result.ok && !refused) {
      refused = true;
      say({ event: 'refused', at, code: result.code });
      if (!args.untilAllowed) break;
    } else if (result.ok && refused) {
      say({ event: 'allowed', at });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  off();
  cached.close();
}
store.close();
await end();
