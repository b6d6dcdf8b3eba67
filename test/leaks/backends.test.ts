// A signed report of a live key suspends it on every backend: the next request through a warm
// CachedKeyStore in the same process is refused 403 key_suspended, and the audit log of that backend
// holds the leak and the suspension.
import { PGlite } from '@electric-sql/pglite';
import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore, type WritableKeyStore } from 'keygate';
import { githubSecretScanning } from 'keygate/leaks';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { fakeGithub, KEYS_URL, reportOf } from './support.js';

const pgAvailable = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisAvailable = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const REDIS_PREFIX = `keygate:test:${RUN_ID}:leaks:`;
const SCHEMA = `keygate_t${RUN_ID}_leaks`;
const closers: (() => Promise<unknown> | unknown)[] = [];

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

type Backend = () => Promise<WritableKeyStore & { close?(): void }>;

const BACKENDS: [string, boolean, Backend][] = [
  ['memory', true, async () => new MemoryKeyStore()],
  [
    'PGlite',
    true,
    async () => {
      const db = await PGlite.create();
      closers.push(() => db.close());
      const store = new PostgresKeyStore({ client: db });
      await store.migrate();
      return store;
    },
  ],
  [
    'PostgreSQL',
    pgAvailable,
    async () => {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
      pool.on('error', () => {});
      closers.push(async () => {
        await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
        await pool.end();
      });
      const store = new PostgresKeyStore({ client: pool, schema: SCHEMA });
      await store.migrate();
      return store;
    },
  ],
  [
    'Redis',
    redisAvailable,
    async () => {
      const client = await createClient({ url: REDIS_URL }).connect();
      closers.push(async () => {
        for await (const keys of client.scanIterator({ MATCH: `${REDIS_PREFIX}*` }))
          if (keys.length) await client.del(keys);
        client.destroy();
      });
      return new RedisKeyStore({ client, prefix: REDIS_PREFIX });
    },
  ],
];

const github = fakeGithub();

describe.each(BACKENDS)('on %s', (_, available, open) => {
  it.skipIf(!available)(
    'a signed report of a live key suspends it: the next request on a warm cache is 403 key_suspended',
    async () => {
      const backend = await open();
      const store = new CachedKeyStore(backend);
      closers.push(() => {
        store.close();
        backend.close?.();
      });
      const keys = new KeyManager({ store });
      const { secret, key } = await keys.create({ accountId: 'acct_leak', name: 'prod', mode: 'live' });
      const request = { headers: { 'x-api-key': secret } };
      expect(await authenticate(request, store)).toMatchObject({ ok: true });

      const handler = githubSecretScanning({ manager: keys, publicKeysUrl: KEYS_URL, fetch: github.fetch });
      const response = await handler(github.request([reportOf(secret)]));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([expect.objectContaining({ label: 'true_positive' })]);

      expect(await authenticate(request, store)).toMatchObject({ ok: false, status: 403, code: 'key_suspended' });
      const entries = await keys.audit({ accountId: 'acct_leak', keyId: key.id });
      expect(entries.map((e) => e.action).slice(0, 2)).toEqual(['key.leaked', 'key.suspended']);
      expect(JSON.stringify(entries)).not.toContain(secret);
    },
  );
});
