import { KeyManager } from 'keygate';
import { RedisKeyStore } from 'keygate/redis';
import { describeKeyStoreContract } from 'keygate/testing';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';
import { TcpProxy } from './support/tcp-proxy.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const clients: ReturnType<typeof createClient>[] = [];
const RUN_PREFIX = `keygate:test:${RUN_ID}:`;
let prefixes = 0;

async function client(url: string) {
  const c = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: () => 100 } });
  // A dropped connection is reported here; node-redis reconnects by itself.
  c.on('error', () => {});
  clients.push(c);
  await c.connect();
  return c;
}

afterAll(async () => {
  if (!available) return;
  const admin = await client(REDIS_URL);
  for await (const keys of admin.scanIterator({ MATCH: `${RUN_PREFIX}*`, COUNT: 1000 })) {
    if (keys.length > 0) await admin.del(keys);
  }
  for (const c of clients) c.destroy();
});

describe.skipIf(!available)('RedisKeyStore', () => {
  const { hostname, port } = new URL(REDIS_URL);

  // The store reaches Redis through a proxy the test can cut; the peer, as another process, connects directly.
  describeKeyStoreContract(
    'RedisKeyStore over node-redis',
    async () => {
      const proxy = new TcpProxy(hostname, Number(port || 6379));
      const url = new URL(REDIS_URL);
      url.hostname = '127.0.0.1';
      url.port = String(await proxy.resume());
      const prefix = `${RUN_PREFIX}${++prefixes}:`;
      const store = new RedisKeyStore({ client: await client(url.toString()), prefix });
      const peer = new RedisKeyStore({ client: await client(REDIS_URL), prefix });
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
    const redis = await client(REDIS_URL);
    const prefix = `${RUN_PREFIX}${++prefixes}:`;
    const store = new RedisKeyStore({ client: redis, prefix });
    const { key } = await new KeyManager({ store }).create({ accountId: 'acct_9', name: 'k', mode: 'test' });
    const record = await store.findById(key.id);
    expect(JSON.parse((await redis.get(`${prefix}key:${key.id}`)) ?? 'null')).toEqual(record);
    expect(await redis.get(`${prefix}hash:${record!.hash}`)).toBe(key.id);
    expect(await redis.sMembers(`${prefix}account:acct_9`)).toEqual([key.id]);
  });

  it('reloads its scripts after the server forgot them (SCRIPT FLUSH)', async () => {
    const redis = await client(REDIS_URL);
    const store = new RedisKeyStore({ client: redis, prefix: `${RUN_PREFIX}${++prefixes}:` });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    await redis.scriptFlush();
    expect(await keys.update(key.id, { name: 'after flush' })).toMatchObject({ name: 'after flush', version: 2 });
  });

  it('opens its pub/sub connection on the first subscribe and ends it on close', async () => {
    const redis = await client(REDIS_URL);
    const store = new RedisKeyStore({ client: redis, prefix: `${RUN_PREFIX}${++prefixes}:` });
    const count = async () =>
      Number(((await redis.pubSubNumSub(store.channel)) as Record<string, number>)[store.channel]);
    expect(await count()).toBe(0);
    store.subscribe(() => {});
    for (let i = 0; i < 100 && (await count()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(1);
    store.close();
    for (let i = 0; i < 100 && (await count()) === 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(0);
  });

  it.each([
    ['a prefix with a space', { prefix: 'key gate:' }],
    ['no client', { client: undefined }],
  ])('refuses %s', async (_, bad) => {
    const redis = await client(REDIS_URL);
    expect(() => new RedisKeyStore({ client: redis, ...bad } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });
});
