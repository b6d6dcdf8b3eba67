// The dashboard's own store on every backend that ships one, proven by the contract suite that
// keygate/testing gives every backend: memory, PGlite, PostgreSQL (pg) and Redis.
import { PGlite } from '@electric-sql/pglite';
import { MemoryKeyStore } from 'keygate';
import { MemoryDashboardStore } from 'keygate/dashboard';
import { PostgresDashboardStore, PostgresKeyStore } from 'keygate/postgres';
import { RedisDashboardStore, RedisKeyStore } from 'keygate/redis';
import { describeDashboardStoreContract } from 'keygate/testing';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';

const t = { describe, it, expect, beforeEach, afterEach };
const hasPg = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const hasRedis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const cleanups: Array<() => Promise<void>> = [];
let n = 0;

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describeDashboardStoreContract(
  'MemoryDashboardStore',
  async () => {
    const keys = new MemoryKeyStore();
    return { keys, store: new MemoryDashboardStore(keys) };
  },
  t,
);

// PGlite takes a while to start: one database for the file, a fresh schema per test.
let pglite: Promise<PGlite> | undefined;
const sharedPGlite = () => {
  pglite ??= PGlite.create().then((db) => {
    cleanups.push(() => db.close());
    return db;
  });
  return pglite;
};

describeDashboardStoreContract(
  'PostgresDashboardStore over PGlite',
  async () => {
    const client = await sharedPGlite();
    const schema = `dash${++n}`;
    const store = new PostgresDashboardStore({ client, schema });
    await store.migrate(); // the key store's tables too: one migration history for both
    const keys = new PostgresKeyStore({ client, schema });
    return { keys, store, peer: new PostgresDashboardStore({ client, schema }), close: async () => keys.close() };
  },
  t,
);

describe.skipIf(!hasPg)('on PostgreSQL', () => {
  let pools: [pg.Pool, pg.Pool] | undefined;
  const schemas: string[] = [];
  const open = () => {
    if (!pools) {
      const opened: [pg.Pool, pg.Pool] = [
        new pg.Pool({ connectionString: PG_URL, max: 4 }),
        new pg.Pool({ connectionString: PG_URL, max: 4 }),
      ];
      pools = opened;
      cleanups.push(async () => {
        for (const schema of schemas) await opened[0].query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await Promise.all(opened.map((p) => p.end()));
      });
    }
    return pools;
  };
  describeDashboardStoreContract(
    'PostgresDashboardStore over a pg Pool',
    async () => {
      const [a, b] = open();
      const schema = `keygate_ds${RUN_ID}_${++n}`;
      schemas.push(schema);
      const keys = new PostgresKeyStore({ client: a, schema });
      await keys.migrate();
      const store = new PostgresDashboardStore({ client: a, schema });
      expect(await store.migrate()).toEqual({ applied: [] }); // the key store's migrations were the same ones
      return { keys, store, peer: new PostgresDashboardStore({ client: b, schema }), close: async () => keys.close() };
    },
    t,
  );
});

describe.skipIf(!hasRedis)('on Redis', () => {
  const runPrefix = `keygate:test:${RUN_ID}:dash:`;
  const connect = () => createClient({ url: REDIS_URL }).connect();
  let clients: Promise<Array<Awaited<ReturnType<typeof connect>>>> | undefined;
  const open = () => {
    clients ??= Promise.all([connect(), connect()]).then((pair) => {
      cleanups.push(async () => {
        for await (const keys of pair[0].scanIterator({ MATCH: `${runPrefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await pair[0].del(keys);
        }
        for (const c of pair) c.destroy();
      });
      return pair;
    });
    return clients;
  };
  describeDashboardStoreContract(
    'RedisDashboardStore',
    async () => {
      const [a, b] = (await open()) as [Awaited<ReturnType<typeof connect>>, Awaited<ReturnType<typeof connect>>];
      const prefix = `${runPrefix}${++n}:`;
      const keys = new RedisKeyStore({ client: a, prefix });
      return {
        keys,
        store: new RedisDashboardStore({ client: a, prefix }),
        peer: new RedisDashboardStore({ client: b, prefix }),
        close: async () => keys.close(),
      };
    },
    t,
  );
});
