// One app process of the soak run: Express + keygate, the same route on PostgreSQL and on Redis,
// each behind a CachedKeyStore and counted by a UsageRecorder. Bundled by esbuild, run by plain node.
// Prints {"port"} when listening; on SIGTERM flushes usage, prints {"flushed"} and exits.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { CachedKeyStore, UsageRecorder } from 'keygate';
import { apiKeyAuth } from 'keygate/express';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const pool = new pg.Pool({ connectionString: env('SOAK_PG_URL'), max: 8 });
const redis = await createClient({ url: env('SOAK_REDIS_URL') }).connect();
const stores = {
  pg: new PostgresKeyStore({ client: pool, schema: env('SOAK_PG_SCHEMA') }),
  redis: new RedisKeyStore({ client: redis, prefix: env('SOAK_REDIS_PREFIX') }),
};

const app = express();
// The load generator plays the proxy: it connects from loopback and says who the client is.
app.set('trust proxy', 'loopback');
const recorders: UsageRecorder[] = [];
const caches: CachedKeyStore[] = [];
for (const [name, store] of Object.entries(stores)) {
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const usage = new UsageRecorder({ store, intervalMs: 1_000, spike: false });
  caches.push(cached);
  recorders.push(usage);
  app.get(
    `/${name}/v1/email/verify`,
    apiKeyAuth({ store: cached, permissions: ['email:verify'], onResult: usage.record }),
    (req, res) => {
      res.json({ keyId: req.apiKey?.id });
    },
  );
}

const server = app.listen(0, '127.0.0.1', () => {
  say({ port: (server.address() as AddressInfo).port });
});
server.keepAliveTimeout = 30_000;

process.once('SIGTERM', async () => {
  await new Promise((resolve) => server.close(resolve));
  await Promise.all(recorders.map((r) => r.close()));
  for (const c of caches) c.close();
  stores.pg.close();
  stores.redis.close();
  await pool.end();
  redis.destroy();
  say({ flushed: true });
  process.exit(0);
});
