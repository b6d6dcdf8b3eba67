// Webhooks over the shared backends: an event written with its key change survives the writer's
// crash and is delivered by a dispatcher started afterwards; two dispatchers over one backend never
// send one event to one endpoint at the same time, and send each exactly once.
import { join } from 'node:path';
import { capabilityOf, KeyManager, type WritableKeyStore } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import type { Outbox } from 'keygate/store-kit';
import { createWebhookDispatcher, verifyWebhook } from 'keygate/webhooks';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const withPg = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const withRedis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const SCHEMA = `keygate_wh${RUN_ID}`;
const PREFIX = `keygate:test:wh${RUN_ID}:`;
// The receiver listens on 127.0.0.1: the operator's development switch lets endpoints and sends reach it.
const LOCAL = { allowPrivateNetworks: true } as const;

const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  if (withPg || withRedis) bundle = await bundleChild(join(import.meta.dirname, 'support/key-change-child.ts'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  await receiver.close();
});

interface Backend {
  name: string;
  available: boolean;
  url: string;
  namespace: string;
  /** A store over its own connection, as another process would hold it. */
  open(): Promise<WritableKeyStore>;
}

const BACKENDS: Backend[] = [
  {
    name: 'PostgreSQL',
    available: withPg,
    url: PG_URL,
    namespace: SCHEMA,
    async open() {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 5 });
      pool.on('error', () => {});
      cleanups.push(() => pool.end());
      const store = new PostgresKeyStore({ client: pool, schema: SCHEMA });
      await store.migrate();
      return store;
    },
  },
  {
    name: 'Redis',
    available: withRedis,
    url: REDIS_URL,
    namespace: PREFIX,
    async open() {
      const client = createClient({ url: REDIS_URL });
      client.on('error', () => {});
      await client.connect();
      cleanups.push(async () => {
        const keys = (await client.sendCommand(['KEYS', `${PREFIX}*`])) as string[];
        if (keys.length > 0) await client.sendCommand(['DEL', ...keys]);
        await client.quit();
      });
      return new RedisKeyStore({ client, prefix: PREFIX });
    },
  },
];

cleanups.push(async () => {
  if (!withPg) return;
  const pool = new pg.Pool({ connectionString: PG_URL });
  await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await pool.end();
});

const outboxOf = (store: WritableKeyStore) => capabilityOf(store, 'outbox') as Outbox;
const at = (path: string) => receiver.received.filter((r) => r.path === path);

describe.each(BACKENDS)('webhooks over $name', (backend) => {
  it.runIf(backend.available)(
    'an event written with its key change survives a crash of the writer before dispatch, and is delivered after restart',
    async () => {
      const accountId = `acct_crash_${backend.name}_${RUN_ID}`;
      const setup = outboxOf(await backend.open());
      const path = `/crash-${backend.name}`;
      const { secret } = await setup.endpoints.create({ accountId, url: receiver.url(path) }, LOCAL);
      const child = startChild(
        bundle!.file,
        {
          backend: backend.name === 'PostgreSQL' ? 'postgres' : 'redis',
          url: backend.url,
          namespace: backend.namespace,
          accountId,
        },
        cleanups,
      );
      const { keyId } = await child.next('written');
      await new Promise((resolve) => child.process.once('exit', resolve));
      expect(child.process.signalCode).toBe('SIGKILL');
      expect(at(path)).toEqual([]);

      // A fresh process: its own connection, its own dispatcher.
      const dispatcher = createWebhookDispatcher({ outbox: outboxOf(await backend.open()), ...LOCAL });
      expect(await dispatcher.runOnce()).toMatchObject({ delivered: 2, failed: 0 });
      const events = await Promise.all(
        at(path).map((r) => verifyWebhook({ secret, headers: r.headers as never, body: r.body })),
      );
      expect(events.map((e) => [e.type, e.data.keyId]).sort()).toEqual([
        ['key.created', keyId],
        ['key.revoked', keyId],
      ]);
    },
    30_000,
  );

  it.runIf(backend.available)(
    'two dispatchers running at once deliver each event to each endpoint exactly once, never two at a time',
    async () => {
      const accountId = `acct_race_${backend.name}_${RUN_ID}`;
      const store = await backend.open();
      const outbox = outboxOf(store);
      const paths = [`/race-a-${backend.name}`, `/race-b-${backend.name}`];
      for (const path of paths) await outbox.endpoints.create({ accountId, url: receiver.url(path) }, LOCAL);
      const keys = new KeyManager({ store });
      for (let i = 0; i < 15; i++) await keys.create({ accountId, name: `k${i}`, mode: 'test' });
      receiver.delayMs = () => 15;
      const first = createWebhookDispatcher({ outbox, batchSize: 4, ...LOCAL });
      const second = createWebhookDispatcher({ outbox: outboxOf(await backend.open()), batchSize: 4, ...LOCAL });
      const drain = async (d: typeof first) => {
        let delivered = 0;
        for (let round = 0; round < 50; round++) {
          const report = await d.runOnce();
          if (report.claimed === 0) break;
          delivered += report.delivered;
        }
        return delivered;
      };
      const [a, b] = await Promise.all([drain(first), drain(second)]);
      receiver.delayMs = () => 0;
      expect(a + b).toBe(30);
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(0);
      for (const path of paths) {
        const ids = at(path).map((r) => r.headers['webhook-id']);
        expect(ids).toHaveLength(15);
        expect(new Set(ids).size).toBe(15);
      }
      expect(receiver.maxInFlight).toBe(1);
    },
    30_000,
  );
});

describe.runIf(withPg)('the outbox in the key write’s PostgreSQL transaction', () => {
  it('a key write whose event cannot be stored is not written either', async () => {
    const schema = `${SCHEMA}_tx`;
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    const store = new PostgresKeyStore({ client: pool, schema });
    try {
      await store.migrate();
      const keys = new KeyManager({ store });
      const { key } = await keys.create({ accountId: 'acct_tx', name: 'ci', mode: 'live' });
      await pool.query(`ALTER TABLE "${schema}".keygate_outbox ADD CONSTRAINT no_more CHECK (false) NOT VALID`);
      await expect(keys.create({ accountId: 'acct_tx', name: 'lost', mode: 'live' })).rejects.toMatchObject({
        code: 'key_store_unavailable',
      });
      await expect(keys.revoke(key.id)).rejects.toMatchObject({ code: 'key_store_unavailable' });
      expect((await keys.list('acct_tx')).map((k) => [k.name, k.status])).toEqual([['ci', 'active']]);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});
