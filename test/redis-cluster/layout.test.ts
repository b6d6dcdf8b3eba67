import { KeyManager, KeyStoreUnavailableError } from 'keygate';
import {
  RedisAttemptCounter,
  RedisCreditLedger,
  RedisDashboardStore,
  RedisKeyStore,
  RedisRateLimiter,
} from 'keygate/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_ID } from '../stores/support/services.js';
import { clusterAvailable, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { ioredisClusters, nodeRedisClusters } from './support/clients.js';

const available = await clusterAvailable();
let cluster: RedisCluster | undefined;
const clients = nodeRedisClusters(() => cluster?.urls ?? []);
const ioClients = ioredisClusters(() => cluster?.urls ?? []);

beforeAll(async () => {
  if (available) cluster = await startRedisCluster();
});

afterAll(async () => {
  await clients.closeAll();
  await ioClients.closeAll();
  await cluster?.stop();
});

/** The keys each master holds under `prefix`, master by master. */
async function keysPerMaster(prefix: string): Promise<string[][]> {
  const { raw } = await clients.open();
  return Promise.all(
    raw.masters.map(async (master) => {
      const node = await raw.nodeClient(master);
      return (await node.sendCommand(['KEYS', `${prefix}*`])) as string[];
    }),
  );
}

describe.skipIf(!available)('the Redis backend on a three-master cluster', () => {
  it("gives a key store and a dashboard store on a cluster the prefix '{keygate}:', and refuses one without a hash tag", async () => {
    for (const { client } of [await clients.open(), await ioClients.open()]) {
      expect(new RedisKeyStore({ client }).prefix).toBe('{keygate}:');
      expect(new RedisDashboardStore({ client }).prefix).toBe('{keygate}:');
      for (const prefix of ['keygate:', '{}keygate:', 'keygate:{x']) {
        expect(() => new RedisKeyStore({ client, prefix })).toThrow(
          expect.objectContaining({ code: 'invalid_input', field: 'prefix' }),
        );
        expect(() => new RedisDashboardStore({ client, prefix })).toThrow(
          expect.objectContaining({ code: 'invalid_input', field: 'prefix' }),
        );
      }
    }
  });

  it("is refused by the cluster (CROSSSLOT) when the key store's keys do not share a hash tag, which is why the prefix needs one", async () => {
    const { client } = await clients.open();
    // The same client, not saying it is a cluster: the store takes a prefix without a tag.
    const store = new RedisKeyStore({ client: { ...client, cluster: false }, prefix: `keygate:test:${RUN_ID}:bare:` });
    const err = await new KeyManager({ store })
      .create({ accountId: 'acct_1', name: 'k', mode: 'test' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyStoreUnavailableError);
    expect(String((err as Error).message)).toMatch(/CROSSSLOT|same slot|non local key/i);
  });

  it('spreads rate-limit counters, credit accounts and failed-attempt buckets over every master', async () => {
    const { client } = await clients.open();
    const base = `keygate:test:${RUN_ID}:spread:`;
    const limiter = new RedisRateLimiter({ client, prefix: `${base}rl:`, timeoutMs: 10_000 });
    const ledger = new RedisCreditLedger({ client, prefix: `${base}cr:` });
    const counter = new RedisAttemptCounter({ client, prefix: `${base}th:` });
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await limiter.consume(`key_${i}`, { limit: 5, windowMs: 60_000 }, 1);
        await ledger.topUp(`acct_${i}`, 5);
        await counter.increment(`198.51.100.${i}`, 60_000);
      }),
    );
    for (const part of ['rl:', 'cr:', 'th:']) {
      const perMaster = await keysPerMaster(`${base}${part}`);
      expect(perMaster).toHaveLength(3);
      for (const keys of perMaster) expect(keys.length).toBeGreaterThan(0);
    }
  });

  it("keeps a failed-attempt bucket's counter and reservations in one slot, so reserving works on a cluster", async () => {
    const { client, raw } = await clients.open();
    const prefix = `keygate:test:${RUN_ID}:throttle:`;
    const counter = new RedisAttemptCounter({ client, prefix });
    const reservation = await counter.reserve('203.0.113.9', 2, 60_000);
    expect(reservation).toMatchObject({ granted: true, count: 0 });
    await reservation.settle(true);
    expect(await counter.get('203.0.113.9')).toMatchObject({ count: 1 });
    const slots = await Promise.all(
      [`${prefix}{203.0.113.9}`, `${prefix}{203.0.113.9}:reserved`].map((key) =>
        raw.sendCommand(undefined, true, ['CLUSTER', 'KEYSLOT', key]),
      ),
    );
    expect(slots[0]).toBe(slots[1]);
  });

  it('loads a script on every master at its first use, and runs it by EVAL on a master that forgot it', async () => {
    const { client, raw } = await clients.open();
    const sent: string[] = [];
    const loaded: Promise<unknown>[] = [];
    const counting = {
      ...client,
      sendCommand(args: string[]) {
        sent.push(args[0] as string);
        const reply = client.sendCommand(args);
        if (args[0] === 'SCRIPT') loaded.push(reply);
        return reply;
      },
    };
    const limiter = new RedisRateLimiter({ client: counting, prefix: `keygate:test:${RUN_ID}:flush:` });
    const rule = { limit: 10, windowMs: 60_000 };
    await limiter.consume('key_a', rule, 1);
    expect(sent).toEqual(['SCRIPT', 'EVALSHA']);
    const sha = (await loaded[0]) as string;
    const nodes = await Promise.all(raw.masters.map((m) => raw.nodeClient(m)));
    expect(nodes).toHaveLength(3);
    for (const node of nodes) expect(await node.sendCommand(['SCRIPT', 'EXISTS', sha])).toEqual([1]);
    await Promise.all(nodes.map((node) => node.sendCommand(['SCRIPT', 'FLUSH'])));
    sent.length = 0;
    expect(await limiter.consume('key_a', rule, 1)).toMatchObject({ allowed: true, remaining: 8 });
    expect(sent).toEqual(['EVALSHA', 'EVAL']);
    sent.length = 0;
    expect(await limiter.consume('key_a', rule, 1)).toMatchObject({ allowed: true, remaining: 7 });
    expect(sent).toEqual(['EVALSHA']);
  });
});
