import { KeyManager, KeyStoreUnavailableError } from 'keygate';
import { type RedisClientLike, RedisKeyStore } from 'keygate/redis';
import { describeKeyStoreContract } from 'keygate/testing';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import { revokeDuringGap } from './support/listener-gap.js';
import { REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';
import { STORE_CALLS } from './support/store-calls.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const RUN_PREFIX = `keygate:test:${RUN_ID}:`;
let prefixes = 0;

/** What these tests need of a node-redis client, whichever major it is. */
interface TestClient extends RedisClientLike {
  connect(): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface Flavour {
  name: string;
  /** A client, not yet connected, and the way this major closes one at once. */
  create(url: string): { client: TestClient; end(): Promise<void> };
}

const socket = { connectTimeout: 1000, reconnectStrategy: () => 100 };

// The newest major (the main devDependency) and the oldest the peer range allows (`redis4` alias).
const FLAVOURS: Flavour[] = [
  {
    name: 'node-redis 6',
    create(url) {
      const client = createClient6({ url, socket });
      return { client, end: async () => client.destroy() };
    },
  },
  {
    name: 'node-redis 4.6',
    create(url) {
      const client = createClient4({ url, socket });
      return { client, end: () => client.disconnect() };
    },
  },
];

const ends: (() => Promise<void>)[] = [];

async function connected(flavour: Flavour, url: string): Promise<TestClient> {
  const { client, end } = flavour.create(url);
  // A dropped connection is reported here; node-redis reconnects by itself.
  client.on('error', () => {});
  ends.push(() => end().catch(() => {}));
  await client.connect();
  return client;
}

afterAll(async () => {
  if (!available) return;
  const admin = await connected(FLAVOURS[0] as Flavour, REDIS_URL);
  const keys = (await admin.sendCommand(['KEYS', `${RUN_PREFIX}*`])) as string[];
  for (let i = 0; i < keys.length; i += 500) await admin.sendCommand(['DEL', ...keys.slice(i, i + 500)]);
  for (const end of ends) await end();
});

describe.skipIf(!available).each(FLAVOURS)('RedisKeyStore on $name', (flavour) => {
  const { hostname, port } = new URL(REDIS_URL);
  const nextPrefix = () => `${RUN_PREFIX}${++prefixes}:`;
  const client = (url = REDIS_URL) => connected(flavour, url);

  /** A store that reaches Redis through a proxy the test can cut, with its channel errors collected. */
  async function proxiedStore(prefix = nextPrefix()) {
    const proxy = new TcpProxy(hostname, Number(port || 6379));
    const url = new URL(REDIS_URL);
    url.hostname = '127.0.0.1';
    url.port = String(await proxy.resume());
    const errors: unknown[] = [];
    const store = new RedisKeyStore({ client: await client(url.toString()), prefix, onError: (e) => errors.push(e) });
    return { proxy, prefix, store, errors };
  }

  // The store reaches Redis through a proxy the test can cut; the peer, as another process, connects directly.
  describeKeyStoreContract(
    `RedisKeyStore over ${flavour.name}`,
    async () => {
      const { proxy, prefix, store } = await proxiedStore();
      const peer = new RedisKeyStore({ client: await client(), prefix });
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
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { channel: true, outage: true },
  );

  it('keeps a record by id, an index digest -> id and a set per account, under its prefix', async () => {
    const redis = await client();
    const prefix = nextPrefix();
    const store = new RedisKeyStore({ client: redis, prefix });
    const { key } = await new KeyManager({ store }).create({ accountId: 'acct_9', name: 'k', mode: 'test' });
    const record = await store.findById(key.id);
    const stored = (await redis.sendCommand(['GET', `${prefix}key:${key.id}`])) as string;
    expect(JSON.parse(stored)).toEqual(record);
    expect(await redis.sendCommand(['GET', `${prefix}hash:${record!.hash}`])).toBe(key.id);
    expect(await redis.sendCommand(['SMEMBERS', `${prefix}account:acct_9`])).toEqual([key.id]);
  });

  it('reloads its scripts after the server forgot them (SCRIPT FLUSH)', async () => {
    const redis = await client();
    const store = new RedisKeyStore({ client: redis, prefix: nextPrefix() });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    await redis.sendCommand(['SCRIPT', 'FLUSH']);
    expect(await keys.update(key.id, { name: 'after flush' })).toMatchObject({ name: 'after flush', version: 2 });
  });

  it('opens its pub/sub connection on the first subscribe and ends it on close', async () => {
    const redis = await client();
    const store = new RedisKeyStore({ client: redis, prefix: nextPrefix() });
    const count = async () => {
      const reply = (await redis.sendCommand(['PUBSUB', 'NUMSUB', store.channel])) as [string, number];
      return Number(reply[1]);
    };
    expect(await count()).toBe(0);
    store.subscribe(() => {});
    for (let i = 0; i < 100 && (await count()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(1);
    store.close();
    for (let i = 0; i < 100 && (await count()) === 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(0);
  });

  it.each(STORE_CALLS)(
    "turns a failure of the client into key_store_unavailable with the client's error as cause (%s)",
    async (_, call) => {
      const { client: closed, end } = flavour.create(REDIS_URL);
      closed.on('error', () => {});
      await closed.connect();
      await end();
      const err = await call(new RedisKeyStore({ client: closed, prefix: nextPrefix() })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeyStoreUnavailableError);
      expect(err).toMatchObject({ code: 'key_store_unavailable', cause: expect.any(Error) });
    },
  );

  it('a key revoked while the subscription was down is refused once it reconnects, not at the TTL', async () => {
    const { proxy, prefix, store, errors } = await proxiedStore();
    const peer = new RedisKeyStore({ client: await client(), prefix });
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
    await proxy.cut();
    console.log(
      `(redis, ${flavour.name}) the cache refused the key revoked during the gap ${ms.toFixed(0)} ms after the connection came back`,
    );
    expect(duringGap).toMatchObject({ ok: true }); // the gap is real: the cache did not hear of the revocation
    expect(after).toMatchObject({ ok: false, status: 401, code: 'revoked_api_key' });
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatchObject({ code: 'key_store_unavailable', cause: expect.anything() });
  });

  it.each([
    ['a prefix with a space', { prefix: 'key gate:' }],
    ['no client', { client: undefined }],
  ])('refuses %s', async (_, bad) => {
    const redis = await client();
    expect(() => new RedisKeyStore({ client: redis, ...bad } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });
});
