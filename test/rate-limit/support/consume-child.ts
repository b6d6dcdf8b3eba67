// One process of the cross-process rate-limit test, bundled by esbuild and run by plain `node`:
// opens its own limiter, says `ready`, waits for `go` on stdin, then fires `n` concurrent consumes
// of one unit against one key and prints what it was allowed.
import { createInterface } from 'node:readline';
import type { RateLimiter } from 'keygate';
import { PostgresRateLimiter } from 'keygate/postgres';
import { RedisRateLimiter } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  kind: 'postgres' | 'redis';
  url: string;
  /** Schema (postgres) or key prefix (redis). */
  namespace: string;
  keyId: string;
  limit: number;
  windowMs: number;
  n: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function open(): Promise<{ limiter: RateLimiter; end: () => Promise<void> }> {
  if (args.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: args.url, max: 4 });
    // Connections are opened before `go`, so that the requests race each other, not the connection set-up.
    await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1')));
    const limiter = new PostgresRateLimiter({ client: pool, schema: args.namespace, timeoutMs: 30_000 });
    return { limiter, end: () => pool.end() };
  }
  const client = await createClient({ url: args.url }).connect();
  const limiter = new RedisRateLimiter({ client, prefix: args.namespace, timeoutMs: 30_000 });
  // Loads the script before `go` (a cost of 0 counts nothing).
  await limiter.consume(args.keyId, { limit: args.limit, windowMs: args.windowMs }, 0);
  return { limiter, end: async () => client.destroy() };
}

const { limiter, end } = await open();
say({ event: 'ready' });
await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
const decisions = await Promise.all(
  Array.from({ length: args.n }, () => limiter.consume(args.keyId, { limit: args.limit, windowMs: args.windowMs }, 1)),
);
const allowed = decisions.filter((d) => d.allowed);
say({ event: 'done', allowed: allowed.length, remaining: allowed.map((d) => d.remaining) });
await end();
