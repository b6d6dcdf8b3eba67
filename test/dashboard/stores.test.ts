// The dashboard's own store: which one it uses when none is given (a MemoryDashboardStore over a
// MemoryKeyStore, also under a CachedKeyStore), the refusals when it cannot tell, and the dashboard at
// work on every backend through its store, "Last used" showing the last allowed request only.
import { PGlite } from '@electric-sql/pglite';
import {
  authenticate,
  CachedKeyStore,
  InvalidInputError,
  KeyManager,
  MemoryKeyStore,
  UsageRecorder,
  type WritableKeyStore,
} from 'keygate';
import { type DashboardStore, dashboard, MemoryDashboardStore } from 'keygate/dashboard';
import { PostgresDashboardStore, PostgresKeyStore } from 'keygate/postgres';
import { RedisDashboardStore, RedisKeyStore } from 'keygate/redis';
import type { UsageStore } from 'keygate/store-kit';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { BASE, Client, keyStoreWithoutUsage, ORIGIN, SECRET } from './support.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const hasPg = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const hasRedis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

const make = (manager: KeyManager, store?: DashboardStore) => () =>
  dashboard({ manager, secret: SECRET, basePath: BASE, ...(store ? { store } : {}) });

// Clients that are never called: a key store needs no connection until it is used.
const idleRedis = { sendCommand: async () => null, duplicate: () => ({}) as never };
const idlePGlite = {
  query: async () => ({ rows: [] }),
  transaction: async () => undefined as never,
  listen: async () => async () => {},
};

describe('without a store option', () => {
  it('uses a MemoryDashboardStore over a MemoryKeyStore, also under a CachedKeyStore', async () => {
    for (const wrap of [(s: MemoryKeyStore) => s, (s: MemoryKeyStore) => new CachedKeyStore(s)]) {
      const memory = new MemoryKeyStore();
      const manager = new KeyManager({ store: wrap(memory) });
      await manager.create({ accountId: 'acct_1', name: 'listed', mode: 'test' });
      const client = await new Client(make(manager)()).signIn();
      expect(await (await client.get(`${BASE}/`)).text()).toContain('>listed</a>');
    }
  });

  it('shares used sign-in links between a dashboard over a MemoryKeyStore and one over a cache of it', async () => {
    const memory = new MemoryKeyStore();
    const bare = make(new KeyManager({ store: memory }))();
    const cached = make(new KeyManager({ store: new CachedKeyStore(memory) }))();
    const link = await bare.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    expect((await new Client(cached).get(link)).status).toBe(303);
    expect((await new Client(bare).get(link)).status).toBe(401);
  });

  it.each([
    ['a PostgresKeyStore', () => new PostgresKeyStore({ client: idlePGlite }), 'PostgresDashboardStore'],
    [
      'a CachedKeyStore over a PostgresKeyStore',
      () => new CachedKeyStore(new PostgresKeyStore({ client: idlePGlite })),
      'PostgresDashboardStore',
    ],
    ['a RedisKeyStore', () => new RedisKeyStore({ client: idleRedis }), 'RedisDashboardStore'],
    ['a key store of its own', () => keyStoreWithoutUsage(new MemoryKeyStore()), 'DashboardStore of your backend'],
  ])('is refused over %s (InvalidInputError naming store and what to pass)', (_, open, named) => {
    const manager = new KeyManager({ store: open() as WritableKeyStore });
    expect(make(manager)).toThrow(expect.objectContaining({ code: 'invalid_input', field: 'store' }));
    expect(make(manager)).toThrow(named);
  });
});

describe('the store option', () => {
  it('is refused when it is not a DashboardStore, such as the key store itself', () => {
    const keyStore = new MemoryKeyStore();
    const manager = new KeyManager({ store: keyStore });
    const wrong = make(manager, keyStore as unknown as DashboardStore);
    expect(wrong).toThrow(InvalidInputError);
    expect(wrong).toThrow(expect.objectContaining({ field: 'store' }));
    expect(wrong).toThrow('a MemoryKeyStore has no listKeysPage, getDailyTotalsOfKeys, getActivityOfKeys');
  });

  it('is the one the dashboard reads: a page of keys comes from it', async () => {
    const memory = new MemoryKeyStore();
    const manager = new KeyManager({ store: memory });
    await manager.create({ accountId: 'acct_1', name: 'in the key store', mode: 'test' });
    const store = new MemoryDashboardStore(memory);
    const pages: unknown[] = [];
    const listKeysPage = store.listKeysPage.bind(store);
    store.listKeysPage = (accountId, query) => {
      pages.push(query);
      return listKeysPage(accountId, query);
    };
    const client = await new Client(make(manager, store)()).signIn();
    expect(await (await client.get(`${BASE}/?q=store`)).text()).toContain('>in the key store</a>');
    expect(pages).toEqual([{ offset: 0, limit: 50, search: 'store', status: undefined, mode: undefined }]);
  });
});

describe('the manager option', () => {
  it('is refused unless it is a KeyManager, even with every method a manager has', () => {
    const real = new KeyManager({ store: new MemoryKeyStore() });
    const lookalike = Object.fromEntries(
      ['create', 'get', 'list', 'update', 'rotate', 'revoke', 'usage', 'rotationStatus'].map((m) => [m, () => {}]),
    );
    const build = () => dashboard({ manager: { ...lookalike, store: real.store } as never, secret: SECRET });
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_input', field: 'manager' }));
  });
});

type Backend = [
  name: string,
  available: boolean,
  open: () => Promise<{ keys: WritableKeyStore & UsageStore; store: DashboardStore }>,
];

let n = 0;
let pglite: Promise<PGlite> | undefined;
const BACKENDS: Backend[] = [
  [
    'memory',
    true,
    async () => {
      const keys = new MemoryKeyStore();
      return { keys, store: new MemoryDashboardStore(keys) };
    },
  ],
  [
    'PGlite',
    true,
    async () => {
      pglite ??= PGlite.create().then((db) => {
        cleanups.push(() => db.close());
        return db;
      });
      const client = await pglite;
      const schema = `dash_ui${++n}`;
      const store = new PostgresDashboardStore({ client, schema });
      await store.migrate();
      return { keys: new PostgresKeyStore({ client, schema }), store };
    },
  ],
  [
    'PostgreSQL',
    hasPg,
    async () => {
      const client = new pg.Pool({ connectionString: PG_URL, max: 2 });
      const schema = `keygate_dui${RUN_ID}_${++n}`;
      cleanups.push(async () => {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      });
      const store = new PostgresDashboardStore({ client, schema });
      await store.migrate();
      return { keys: new PostgresKeyStore({ client, schema }), store };
    },
  ],
  [
    'Redis',
    hasRedis,
    async () => {
      const client = await createClient({ url: REDIS_URL }).connect();
      const prefix = `keygate:test:${RUN_ID}:dash-ui${++n}:`;
      cleanups.push(async () => {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await client.del(keys);
        }
        client.destroy();
      });
      return { keys: new RedisKeyStore({ client, prefix }), store: new RedisDashboardStore({ client, prefix }) };
    },
  ],
];

const rowOf = (html: string, name: string) => {
  const start = html.indexOf(`>${name}</a>`);
  return html.slice(start, html.indexOf('</tr>', start));
};

describe.each(BACKENDS)('the dashboard over %s', (_, available, open) => {
  it.skipIf(!available)(
    'shows the last allowed use as "Last used": a later 401 does not move it, a key only refused shows none',
    async () => {
      const { keys, store } = await open();
      let now = Date.now() - 10 * 60_000;
      const manager = new KeyManager({ store: keys, clock: () => now });
      const recorder = new UsageRecorder({ store: keys, intervalMs: 0, clock: () => now, spike: false });
      const send = (secret: string, ip: string) =>
        authenticate({ headers: { 'x-api-key': secret }, ip }, keys, { onResult: recorder.record });
      const used = await manager.create({ accountId: 'acct_1', name: 'used', mode: 'live' });
      const fenced = await manager.create({
        accountId: 'acct_1',
        name: 'fenced',
        mode: 'live',
        allowedIps: ['203.0.113.0/24'],
      });
      expect(await send(used.secret, '203.0.113.9')).toMatchObject({ status: 200 });
      const allowedAt = new Date(now).toISOString();
      now += 5 * 60_000;
      await manager.revoke(used.key.id);
      expect(await send(used.secret, '198.51.100.1')).toMatchObject({ status: 401 });
      expect(await send(fenced.secret, '198.51.100.1')).toMatchObject({ status: 403 });
      await recorder.flush();
      const refusedAt = new Date(now).toISOString();

      const client = await new Client(dashboard({ manager, store, secret: SECRET, basePath: BASE })).signIn();
      const list = await (await client.get(`${BASE}/`)).text();
      expect(rowOf(list, 'used')).toContain(`<time datetime="${allowedAt}">`);
      expect(rowOf(list, 'fenced')).toContain('<span class="muted">never</span>');
      expect(list).not.toContain(refusedAt);
      const page = await (await client.get(`${BASE}/keys/${used.key.id}`)).text();
      expect(page).toMatch(
        new RegExp(`Last used: <time datetime="${allowedAt}">[^<]*</time> from <code>203.0.113.9</code>`),
      );
      expect(page).not.toContain('198.51.100.1');
      const fencedPage = await (await client.get(`${BASE}/keys/${fenced.key.id}`)).text();
      expect(fencedPage).toContain('Last used: <span class="muted">never</span>');
    },
  );

  it.skipIf(!available)(
    'finds nothing for a search or a key id with a NUL character (no rows, 404), never a store failure',
    async () => {
      const { keys, store } = await open();
      const manager = new KeyManager({ store: keys });
      const { key } = await manager.create({ accountId: 'acct_1', name: 'plain', mode: 'test' });
      const client = await new Client(dashboard({ manager, store, secret: SECRET, basePath: BASE })).signIn();
      for (const q of ['%00', 'pla%00', `${key.id}%00`]) {
        const response = await client.get(`${BASE}/?q=${q}`);
        expect(response.status).toBe(200);
        expect(await response.text()).not.toContain('>plain</a>');
      }
      expect((await client.get(`${BASE}/keys/${key.id}%00`)).status).toBe(404);
      expect(await (await client.get(`${BASE}/?q=pla`)).text()).toContain('>plain</a>');
    },
  );
});
