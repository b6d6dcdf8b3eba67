// The store extensions the dashboard uses, on every store that ships them: the used-token record
// (single use across processes, atomic, expiring) and the batch usage reads of the key list.
import { PGlite } from '@electric-sql/pglite';
import { KeyManager, MemoryKeyStore, type WritableKeyStore } from 'keygate';
import type { KeyListStore, UsageSummaryStore, UsedTokenStore } from 'keygate/dashboard';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import { type UsageStore, utcDay } from 'keygate/store-kit';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

type Store = UsedTokenStore & UsageSummaryStore & UsageStore & WritableKeyStore & Partial<KeyListStore>;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const hasPg = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const hasRedis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
let n = 0;
// PGlite takes a while to start: one database for the file, a fresh schema per test.
let pglite: Promise<PGlite> | undefined;
const sharedPGlite = () => {
  pglite ??= PGlite.create().then((db) => {
    cleanups.push(() => db.close());
    return db;
  });
  return pglite;
};

/** Two handles on one store: what two processes sharing it would hold. */
const STORES: Array<[string, boolean, () => Promise<[Store, Store]>]> = [
  [
    'MemoryKeyStore',
    true,
    async () => {
      const store = new MemoryKeyStore();
      return [store, store];
    },
  ],
  [
    'PostgresKeyStore (PGlite)',
    true,
    async () => {
      const db = await sharedPGlite();
      const schema = `dash${++n}`;
      const a = new PostgresKeyStore({ client: db, schema });
      await a.migrate();
      return [a, new PostgresKeyStore({ client: db, schema })];
    },
  ],
  [
    'PostgresKeyStore (pg)',
    hasPg,
    async () => {
      const schema = `keygate_d${RUN_ID}_${++n}`;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
      const other = new pg.Pool({ connectionString: PG_URL, max: 4 });
      cleanups.push(async () => {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
        await other.end();
      });
      const a = new PostgresKeyStore({ client: pool, schema });
      await a.migrate();
      return [a, new PostgresKeyStore({ client: other, schema })];
    },
  ],
  [
    'RedisKeyStore',
    hasRedis,
    async () => {
      const prefix = `keygate:test:${RUN_ID}:dash${++n}:`;
      const c1 = await createClient({ url: REDIS_URL }).connect();
      const c2 = await createClient({ url: REDIS_URL }).connect();
      cleanups.push(async () => {
        for await (const keys of c1.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await c1.del(keys);
        }
        c1.destroy();
        c2.destroy();
      });
      return [new RedisKeyStore({ client: c1, prefix }), new RedisKeyStore({ client: c2, prefix })];
    },
  ],
];

const later = (ms: number) => new Date(Date.now() + ms).toISOString();

describe.each(STORES)('%s', (_, available, open) => {
  it.skipIf(!available)('records a token once: true for the first caller only, seen by the other handle', async () => {
    const [a, b] = await open();
    expect(await a.isTokenUsed('sign-in:t1')).toBe(false);
    expect(await a.markTokenUsed('sign-in:t1', later(60_000))).toBe(true);
    expect(await b.markTokenUsed('sign-in:t1', later(60_000))).toBe(false);
    expect(await b.isTokenUsed('sign-in:t1')).toBe(true);
    expect(await b.isTokenUsed('sign-in:t2')).toBe(false);
  });

  it.skipIf(!available)('of concurrent callers, exactly one records a token', async () => {
    const [a, b] = await open();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).markTokenUsed('sign-in:race', later(60_000))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it.skipIf(!available)('forgets a token once it has expired', async () => {
    const [a] = await open();
    expect(await a.markTokenUsed('session:short', later(30))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await a.isTokenUsed('session:short')).toBe(false);
  });

  it.skipIf(!available)('reads the usage and activity of many keys at once', async () => {
    const [a] = await open();
    const today = utcDay(Date.now());
    const yesterday = utcDay(Date.now() - 86_400_000);
    await a.addUsage({
      counts: [
        { keyId: 'k1', accountId: 'acct', day: today, outcome: 'allowed', count: 3 },
        { keyId: 'k1', accountId: 'acct', day: yesterday, outcome: 'ip_not_allowed', count: 2 },
        { keyId: 'k1', accountId: 'acct', day: today, outcome: 'expired_api_key', count: 4 },
        { keyId: 'k2', accountId: 'acct', day: '2000-01-01', outcome: 'allowed', count: 9 },
        { keyId: 'k3', accountId: 'acct', day: today, outcome: 'allowed', count: 1 },
      ],
      activity: [{ keyId: 'k1', lastUsedAt: '2026-01-01T00:00:00.000Z', lastUsedIp: '203.0.113.1' }],
    });
    const totals = await a.getDailyTotalsOfKeys(['k1', 'k2', 'kx'], yesterday, today);
    expect(totals.map((t) => [t.keyId, t.day, t.total]).sort()).toEqual(
      [
        ['k1', today, 7],
        ['k1', yesterday, 2],
      ].sort(),
    );
    expect(await a.getActivityOfKeys(['k1', 'k2'])).toEqual([
      { keyId: 'k1', lastUsedAt: '2026-01-01T00:00:00.000Z', lastUsedIp: '203.0.113.1' },
    ]);
    expect(await a.getDailyTotalsOfKeys([], yesterday, today)).toEqual([]);
  });
});

describe.each(STORES.filter(([name]) => name !== 'RedisKeyStore'))('%s', (_, available, open) => {
  it.skipIf(!available)(
    "reads one page of an account's keys, newest first, filtered by name, with the total",
    async () => {
      const [store] = await open();
      let now = Date.parse('2026-01-01T00:00:00Z');
      const keys = new KeyManager({ store, clock: () => now });
      for (let i = 0; i < 12; i++) {
        await keys.create({ accountId: 'acct_p', name: `${i % 3 ? 'Web' : 'batch'}-${i}`, mode: 'test' });
        now += 1000;
      }
      await keys.create({ accountId: 'acct_other', name: 'Web-x', mode: 'test' });
      const page = (offset: number, limit: number, nameContains?: string) =>
        (store.listKeysPage as KeyListStore['listKeysPage'])('acct_p', { offset, limit, nameContains });
      const first = await page(0, 5);
      expect(first.total).toBe(12);
      expect(first.records.map((r) => r.name)).toEqual(['Web-11', 'Web-10', 'batch-9', 'Web-8', 'Web-7']);
      const filtered = await page(2, 3, 'wEB');
      expect(filtered.total).toBe(8);
      expect(filtered.records.map((r) => r.name)).toEqual(['Web-8', 'Web-7', 'Web-5']);
      expect(await page(100, 5)).toEqual({ records: [], total: 12 });
      expect(await page(0, 5, 'nothing')).toEqual({ records: [], total: 0 });
      expect(await page(0, 5, '%')).toEqual({ records: [], total: 0 });
    },
  );
});
