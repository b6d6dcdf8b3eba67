import { KeyManager, KeyStoreUnavailableError } from 'keygate';
import { MysqlKeyStore } from 'keygate/mysql';
import { describeKeyStoreContract } from 'keygate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import { revokeDuringGap } from './support/listener-gap.js';
import { MYSQL_URL, mysqlAvailable, openTestDatabase, type TestDatabase, throughPort } from './support/mysql.js';
import { STORE_CALLS } from './support/store-calls.js';

const available = await mysqlAvailable();
const { hostname, port } = new URL(MYSQL_URL);
let db: TestDatabase;
let prefixes = 0;
const nextPrefix = () => `t${++prefixes}_`;
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  if (available) db = await openTestDatabase('ks');
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.cut();
  await db?.drop();
});

/** A store that reaches MariaDB through a proxy the test can cut, with its poll errors collected. */
async function proxiedStore(tablePrefix = nextPrefix()) {
  const proxy = new TcpProxy(hostname, Number(port || 3306));
  proxies.push(proxy);
  const client = db.pool({ url: throughPort(db.url, await proxy.resume()), connectTimeout: 1000 });
  const errors: unknown[] = [];
  const store = new MysqlKeyStore({ client, tablePrefix, pollIntervalMs: 100, onError: (e) => errors.push(e) });
  await store.migrate();
  return { proxy, tablePrefix, store, errors };
}

describe.skipIf(!available)('MysqlKeyStore over MariaDB', () => {
  // The store reaches MariaDB through a proxy the test can cut; the peer, as another process, connects directly.
  describeKeyStoreContract(
    'MysqlKeyStore over a mysql2 pool',
    async () => {
      const { proxy, tablePrefix, store } = await proxiedStore();
      const peer = new MysqlKeyStore({ client: db.pool(), tablePrefix });
      return {
        store,
        peer,
        breakStore: () => proxy.cut(),
        restoreStore: async () => {
          await proxy.resume();
        },
        close: async () => {
          store.close();
          await proxy.cut();
        },
        unmigrated: async (count) => {
          const fresh = nextPrefix();
          return {
            stores: Array.from({ length: count }, () => new MysqlKeyStore({ client: db.pool(), tablePrefix: fresh })),
          };
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { channel: true, outage: true, hooks: ['unmigrated'] },
  );

  it('finds a key by digest through the unique index', async () => {
    const tablePrefix = nextPrefix();
    const client = db.pool();
    const store = new MysqlKeyStore({ client, tablePrefix });
    await store.migrate();
    const { key } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'test' });
    const record = await store.findById(key.id);
    const [rows] = await client.query(
      `SELECT non_unique, column_name FROM information_schema.statistics
        WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'keys_hash'`,
      [`${tablePrefix}keys`],
    );
    expect(rows).toEqual([{ non_unique: 0, column_name: 'hash' }]);
    expect(await store.findByHash(record!.hash)).toEqual(record);
  });

  it('refuses a hand-written UPDATE of a revoked key: revocation is final in the database', async () => {
    const tablePrefix = nextPrefix();
    const client = db.pool();
    const store = new MysqlKeyStore({ client, tablePrefix });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    await keys.revoke(key.id);
    const err = await client
      .query(`UPDATE ${tablePrefix}keys SET status = 'active' WHERE id = ?`, [key.id])
      .catch((e: unknown) => e);
    expect(String(err)).toMatch(/keygate: a revoked key can no longer be changed/);
    expect((await store.findById(key.id))?.status).toBe('revoked');
  });

  it.each(STORE_CALLS)(
    "turns a failure of mysql2 into key_store_unavailable with mysql2's error as cause (%s)",
    async (_, call) => {
      const { proxy, store } = await proxiedStore();
      await proxy.cut();
      const err = await call(store).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeyStoreUnavailableError);
      expect(err).toMatchObject({ code: 'key_store_unavailable', cause: expect.any(Error) });
      expect((err as Error).cause).not.toBeInstanceOf(KeyStoreUnavailableError);
    },
  );

  it('a key revoked while polling was cut off is refused once the connection is back, not at the TTL', async () => {
    const { proxy, tablePrefix, store } = await proxiedStore();
    const peer = new MysqlKeyStore({ client: db.pool(), tablePrefix });
    const { duringGap, after, ms } = await revokeDuringGap({
      store,
      peer,
      cut: () => proxy.cut(),
      restore: async () => {
        await proxy.resume();
      },
      patienceMs: 15_000,
    });
    store.close();
    console.log(
      `(mysql) the cache refused the key revoked during the gap ${ms.toFixed(0)} ms after the connection came back`,
    );
    expect(duringGap).toMatchObject({ ok: true });
    expect(after).toMatchObject({ ok: false, status: 401, code: 'revoked_api_key' });
  });

  it('numbers changes without gaps in commit order, even from concurrent writers', async () => {
    const tablePrefix = nextPrefix();
    const client = db.pool();
    const store = new MysqlKeyStore({ client, tablePrefix });
    await store.migrate();
    const keys = new KeyManager({ store });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => keys.create({ accountId: 'a', name: `k${i}`, mode: 'test' })),
    );
    const [rows] = await client.query(`SELECT seq FROM ${tablePrefix}changes ORDER BY seq`);
    expect((rows as { seq: number }[]).map((r) => Number(r.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('reports failing polls through onError, and resyncs when rows it had not read were pruned meanwhile', async () => {
    const { proxy, tablePrefix, store, errors } = await proxiedStore();
    const client = db.pool();
    const keys = new KeyManager({ store: new MysqlKeyStore({ client, tablePrefix }) });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    const seen: string[] = [];
    const off = store.subscribe((c) => seen.push(c.type === 'resync' ? 'resync' : `${c.type}:${c.version}`));
    while (!seen.includes('resync')) await new Promise((r) => setTimeout(r, 10));
    await proxy.cut();
    await keys.update(key.id, { name: 'two' });
    await keys.update(key.id, { name: 'three' });
    // Pruned before this process read them (as after an outage longer than changeRetentionMs).
    await client.query(`DELETE FROM ${tablePrefix}changes`);
    await keys.update(key.id, { name: 'four' });
    while (errors.length === 0) await new Promise((r) => setTimeout(r, 10));
    seen.length = 0;
    await proxy.resume();
    while (!seen.includes('updated:4')) await new Promise((r) => setTimeout(r, 10));
    off();
    store.close();
    expect(seen).toEqual(['resync', 'updated:4']);
    for (const e of errors) expect(e).toMatchObject({ code: 'key_store_unavailable', cause: expect.anything() });
  });

  it.each([
    ['client', { client: {} }],
    ['tablePrefix', { client: 'pool', tablePrefix: 'Keygate_' }],
    ['tablePrefix', { client: 'pool', tablePrefix: 'kg`; DROP TABLE x; --' }],
    ['pollIntervalMs', { client: 'pool', pollIntervalMs: 0 }],
    ['pollIntervalMs', { client: 'pool', pollIntervalMs: 120_000 }],
    ['changeRetentionMs', { client: 'pool', changeRetentionMs: 1000 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const withPool = options.client === 'pool' ? { ...options, client: db.pool() } : options;
    expect(() => new MysqlKeyStore(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
