import { KeyManager, KeyStoreUnavailableError } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { describeKeyStoreContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import { revokeDuringGap } from './support/listener-gap.js';
import { PG_URL, RUN_ID, serviceAvailable } from './support/services.js';
import { STORE_CALLS } from './support/store-calls.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const pools: pg.Pool[] = [];
const schemas: string[] = [];

function pool(connectionString: string): pg.Pool {
  const p = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: 1000 });
  // An idle connection the server (or the test's proxy) drops is reported here; the pool replaces it.
  p.on('error', () => {});
  pools.push(p);
  return p;
}

/** A fresh schema per test, so parallel runs and tests never see each other's keys or notifications. */
function nextSchema(): string {
  const schema = `keygate_t${RUN_ID}_${schemas.length + 1}`;
  schemas.push(schema);
  return schema;
}

afterAll(async () => {
  if (!available) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
  await Promise.all(pools.map((p) => p.end()));
});

describe.skipIf(!available)('PostgresKeyStore over pg', () => {
  const { hostname, port } = new URL(PG_URL);

  // The store reaches PostgreSQL through a proxy the test can cut; the peer, as another process, connects directly.
  describeKeyStoreContract(
    'PostgresKeyStore over a pg Pool',
    async () => {
      const proxy = new TcpProxy(hostname, Number(port || 5432));
      const url = new URL(PG_URL);
      url.hostname = '127.0.0.1';
      url.port = String(await proxy.resume());
      const schema = nextSchema();
      const store = new PostgresKeyStore({ client: pool(url.toString()), schema });
      await store.migrate();
      const peer = new PostgresKeyStore({ client: pool(PG_URL), schema });
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
          const fresh = nextSchema();
          return {
            stores: Array.from({ length: count }, () => new PostgresKeyStore({ client: pool(PG_URL), schema: fresh })),
          };
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { channel: true, outage: true, hooks: ['unmigrated'] },
  );

  it('finds a key by digest through the unique index', async () => {
    const schema = nextSchema();
    const client = pool(PG_URL);
    const store = new PostgresKeyStore({ client, schema });
    await store.migrate();
    const { key } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'test' });
    const record = await store.findById(key.id);
    const { rows } = await client.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'keygate_keys_hash'`,
      [schema],
    );
    expect(rows[0]?.indexdef).toMatch(/CREATE UNIQUE INDEX .* USING btree \(hash\)/);
    expect(await store.findByHash(record!.hash)).toEqual(record);
  });

  it('reconnects its LISTEN connection after the server drops it', async () => {
    const schema = nextSchema();
    const store = new PostgresKeyStore({ client: pool(PG_URL), schema });
    await store.migrate();
    const admin = pool(PG_URL);
    const keys = new KeyManager({ store: new PostgresKeyStore({ client: admin, schema }) });
    const seen: string[] = [];
    const off = store.subscribe((c) => seen.push(c.type === 'resync' ? 'resync' : `${c.type}:${c.version}`));
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    // Wait for the LISTEN connection, then kill it from the server side.
    let listeners: { pid: number }[] = [];
    while (listeners.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      ({ rows: listeners } = await admin.query(
        `SELECT pid FROM pg_stat_activity WHERE query = $1 AND datname = current_database()`,
        [`LISTEN "${store.channel}"`],
      ));
    }
    await admin.query('SELECT pg_terminate_backend($1)', [listeners[0]!.pid]);
    // Changes keep coming until one arrives through the new connection.
    for (let i = 0; !seen.some((s) => s.startsWith('updated:')) && i < 200; i++) {
      await keys.update(key.id, { name: `n${i}` });
      await new Promise((r) => setTimeout(r, 50));
    }
    off();
    store.close();
    expect(seen.some((s) => s.startsWith('updated:'))).toBe(true);
  });

  /** A store that reaches PostgreSQL through a proxy the test can cut, with its channel errors collected. */
  async function proxiedStore() {
    const proxy = new TcpProxy(hostname, Number(port || 5432));
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String(await proxy.resume());
    const schema = nextSchema();
    const errors: unknown[] = [];
    const store = new PostgresKeyStore({ client: pool(url.toString()), schema, onError: (e) => errors.push(e) });
    await store.migrate();
    return { proxy, schema, store, errors };
  }

  it.each(STORE_CALLS)(
    "turns a failure of pg into key_store_unavailable with pg's error as cause (%s)",
    async (_, call) => {
      const { proxy, store } = await proxiedStore();
      await proxy.cut();
      const err = await call(store).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeyStoreUnavailableError);
      expect(err).toMatchObject({ code: 'key_store_unavailable', cause: expect.any(Error) });
      expect((err as Error).cause).not.toBeInstanceOf(KeyStoreUnavailableError);
    },
  );

  it('a key revoked while the LISTEN connection was down is refused once it reconnects, not at the TTL', async () => {
    const { proxy, schema, store, errors } = await proxiedStore();
    const peer = new PostgresKeyStore({ client: pool(PG_URL), schema });
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
      `(postgres) the cache refused the key revoked during the gap ${ms.toFixed(0)} ms after the connection came back`,
    );
    expect(duringGap).toMatchObject({ ok: true }); // the gap is real: the cache did not hear of the revocation
    expect(after).toMatchObject({ ok: false, status: 401, code: 'revoked_api_key' });
    // The dropped LISTEN connection was reported, as a store error carrying pg's own.
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatchObject({ code: 'key_store_unavailable', cause: expect.anything() });
  });
});
