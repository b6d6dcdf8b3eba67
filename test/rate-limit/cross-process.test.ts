import { join } from 'node:path';
import { PostgresRateLimiter } from 'keygate/postgres';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

// Children run the TypeScript sources, bundled by esbuild (see support/child-process.ts).
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;

beforeAll(async () => {
  if (postgres || redis) bundle = await bundleChild(join(import.meta.dirname, 'support/consume-child.ts'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

interface Done {
  allowed: number;
  remaining: number[];
}

async function pgNamespace(): Promise<string> {
  const schema = `keygate_rlx${RUN_ID}`;
  const pool = new pg.Pool({ connectionString: PG_URL });
  await new PostgresRateLimiter({ client: pool, schema }).migrate();
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  return schema;
}

async function redisNamespace(): Promise<string> {
  const prefix = `keygate:test:${RUN_ID}:rlx:`;
  const client = await createClient({ url: REDIS_URL }).connect();
  cleanups.push(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await client.del(keys);
    client.destroy();
  });
  return prefix;
}

const backends = [
  { name: 'postgres', kind: 'postgres', url: PG_URL, available: postgres, namespace: pgNamespace },
  { name: 'redis', kind: 'redis', url: REDIS_URL, available: redis, namespace: redisNamespace },
].filter((b) => b.available);

describe.skipIf(backends.length === 0)('rate limits across processes', () => {
  it.each(backends)(
    '4 processes x 100 concurrent requests against a limit of 150 allow exactly 150 ($name)',
    async ({ kind, url, namespace }) => {
      const common = { kind, url, namespace: await namespace(), keyId: `key_x${RUN_ID}`, limit: 150, windowMs: 60_000 };
      const children = Array.from({ length: 4 }, () => startChild(bundle!.file, { ...common, n: 100 }, cleanups));
      await Promise.all(children.map((c) => c.next('ready')));
      for (const c of children) c.send('go');
      const results = (await Promise.all(children.map((c) => c.next('done')))) as unknown as Done[];
      expect(results.reduce((n, r) => n + r.allowed, 0)).toBe(150);
      // Every allowed request, whichever process sent it, left a different count behind: 149 down to 0.
      const remaining = results.flatMap((r) => r.remaining).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => i));
    },
    60_000,
  );
});
