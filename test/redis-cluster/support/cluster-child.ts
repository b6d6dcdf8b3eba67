// One process of the Redis Cluster cross-process tests, bundled by esbuild and run by plain `node`. It
// opens its own cluster client (node-redis or ioredis) and plays one role:
//   consume: says `ready`, waits for `go`, fires `n` concurrent consumes of 1 unit against one key.
//   hold:    says `ready`, waits for `go`, takes `n` concurrent holds of 1 credit from one account.
//   watch:   holds a CachedKeyStore (TTL 60 s) and authenticates the key every millisecond; says
//            `channel` when a change arrives and `refused` when the key is first refused.
//   revoke:  revokes the key and says when the call started and returned.
import { createInterface } from 'node:readline';
import { Cluster } from 'ioredis';
import { authenticate, CachedKeyStore, KeyManager } from 'keygate';
import {
  fromIoredis,
  fromNodeRedisCluster,
  type RedisClientLike,
  RedisCreditLedger,
  RedisKeyStore,
  RedisRateLimiter,
} from 'keygate/redis';
import { createCluster } from 'redis';

interface Args {
  role: 'consume' | 'hold' | 'watch' | 'revoke';
  client: 'node-redis' | 'ioredis';
  urls: string[];
  prefix: string;
  keyId?: string;
  accountId?: string;
  secret?: string;
  n?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const go = () =>
  new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));

async function open(): Promise<{ client: RedisClientLike; end: () => void }> {
  if (args.client === 'ioredis') {
    const nodes = args.urls.map((url) => ({ host: '127.0.0.1', port: Number(new URL(url).port) }));
    const raw = new Cluster(nodes, { lazyConnect: true });
    await raw.connect();
    return { client: fromIoredis(raw), end: () => raw.disconnect() };
  }
  const raw = await createCluster({ rootNodes: args.urls.map((url) => ({ url })) }).connect();
  return { client: fromNodeRedisCluster(raw), end: () => raw.destroy() };
}

const { client, end } = await open();
const n = args.n ?? 0;
if (args.role === 'consume') {
  const limiter = new RedisRateLimiter({ client, prefix: args.prefix, timeoutMs: 30_000 });
  const limit = { limit: 150, windowMs: 60_000 };
  await limiter.consume(args.keyId as string, limit, 0); // loads the script before `go`
  say({ event: 'ready' });
  await go();
  const decisions = await Promise.all(Array.from({ length: n }, () => limiter.consume(args.keyId as string, limit, 1)));
  const allowed = decisions.filter((d) => d.allowed);
  say({ event: 'done', allowed: allowed.length, remaining: allowed.map((d) => d.remaining) });
} else if (args.role === 'hold') {
  const ledger = new RedisCreditLedger({ client, prefix: args.prefix, timeoutMs: 30_000 });
  await ledger.hold(args.accountId as string, Number.MAX_SAFE_INTEGER); // loads the script before `go`
  say({ event: 'ready' });
  await go();
  const results = await Promise.all(Array.from({ length: n }, () => ledger.hold(args.accountId as string, 1)));
  say({ event: 'done', holdIds: results.flatMap((r) => (r.ok ? [r.holdId] : [])) });
} else if (args.role === 'revoke') {
  const store = new RedisKeyStore({ client, prefix: args.prefix });
  const startedAt = now();
  await new KeyManager({ store }).revoke(args.keyId as string);
  say({ event: 'revoked', startedAt, returnedAt: now() });
  store.close();
} else {
  const store = new RedisKeyStore({ client, prefix: args.prefix });
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const off = store.subscribe((change) => {
    if (change.type === 'updated') say({ event: 'channel' });
  });
  const request = { headers: { 'x-api-key': args.secret as string }, ip: '203.0.113.7' };
  let ready = false;
  for (;;) {
    const result = await authenticate(request, cached);
    if (result.ok && !ready) {
      ready = true;
      say({ event: 'ready' });
    } else if (!result.ok) {
      say({ event: 'refused', at: now(), code: result.code });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  off();
  cached.close();
  store.close();
}
end();
