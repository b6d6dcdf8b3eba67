import { join } from 'node:path';
import { KeyManager } from 'keygate';
import { RedisCreditLedger, RedisKeyStore } from 'keygate/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type Child, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { RUN_ID } from '../stores/support/services.js';
import { clusterAvailable, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { nodeRedisClusters } from './support/clients.js';

const available = await clusterAvailable();
let cluster: RedisCluster | undefined;
let bundle: ChildBundle | undefined;
const clients = nodeRedisClusters(() => cluster?.urls ?? []);
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (!available) return;
  [cluster, bundle] = await Promise.all([
    startRedisCluster(),
    bundleChild(join(import.meta.dirname, 'support/cluster-child.ts')),
  ]);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  await clients.closeAll();
  await cluster?.stop();
});

const CLIENTS = ['node-redis', 'ioredis'] as const;
const child = (args: Record<string, unknown>): Child =>
  startChild(bundle!.file, { urls: cluster!.urls, ...args }, cleanups);

async function race(children: Child[]): Promise<Record<string, unknown>[]> {
  await Promise.all(children.map((c) => c.next('ready')));
  for (const c of children) c.send('go');
  return Promise.all(children.map((c) => c.next('done')));
}

describe.skipIf(!available)('Redis Cluster across processes', () => {
  it.each(CLIENTS)(
    '3 processes x 100 concurrent requests against a limit of 150 allow exactly 150, each count once (%s)',
    async (client) => {
      const args = { role: 'consume', client, prefix: `keygate:test:${RUN_ID}:rl:${client}:`, keyId: 'key_x', n: 100 };
      const done = await race(Array.from({ length: 3 }, () => child(args)));
      expect(done.reduce((sum, d) => sum + Number(d.allowed), 0)).toBe(150);
      const remaining = done.flatMap((d) => d.remaining as number[]).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => i));
    },
    60_000,
  );

  it.each(CLIENTS)(
    '3 processes x 50 concurrent holds of 1 against 100 credits grant exactly 100, and the account reconciles (%s)',
    async (client) => {
      const prefix = `keygate:test:${RUN_ID}:cx:${client}:`;
      const accountId = `acct_${client}`;
      const ledger = new RedisCreditLedger({ client: (await clients.open()).client, prefix, timeoutMs: 30_000 });
      await ledger.topUp(accountId, 100, { reference: 'pay_1' });
      const done = await race(
        Array.from({ length: 3 }, () => child({ role: 'hold', client, prefix, accountId, n: 50 })),
      );
      const holdIds = done.flatMap((d) => d.holdIds as string[]);
      expect(new Set(holdIds).size).toBe(100);
      expect(await ledger.balance(accountId)).toBe(0);
      const settles = await Promise.all(holdIds.slice(0, 50).map((id) => ledger.settle(id)));
      await Promise.all(holdIds.slice(50).map((id) => ledger.release(id)));
      expect(settles.reduce((sum, s) => sum + s.charged, 0)).toBe(50);
      expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 50, balance: 50, held: 0, ok: true });
    },
    60_000,
  );

  it.each(CLIENTS)(
    'a key revoked in process B is refused by a warm cache in process A within 1 s (%s)',
    async (client) => {
      const prefix = `{keygate:test:${RUN_ID}:x:${client}}:`;
      const keys = new KeyManager({ store: new RedisKeyStore({ client: (await clients.open()).client, prefix }) });
      const { secret, key } = await keys.create({ accountId: 'acct_x', name: 'victim', mode: 'live' });
      const probe = await keys.create({ accountId: 'acct_x', name: 'probe', mode: 'test' });
      const a = child({ role: 'watch', client, prefix, secret });
      await a.next('ready');
      // The watcher's channel is live once a change made here reaches it.
      const live = a.next('channel');
      let heard = false;
      live.then(() => {
        heard = true;
      });
      for (let i = 0; !heard && i < 100; i++) {
        await keys.update(probe.key.id, { name: `probe ${i}` });
        await new Promise((r) => setTimeout(r, 100));
      }
      await live;
      const revoked = await child({ role: 'revoke', client, prefix, keyId: key.id }).next('revoked');
      const refused = await a.next('refused');
      const delay = Number(refused.at) - Number(revoked.startedAt);
      console.log(
        `revocation delay (Redis Cluster, ${client}): ${delay.toFixed(1)} ms from the revoke call in B to the refusal in A`,
      );
      expect(refused.code).toBe('revoked_api_key');
      expect(delay).toBeLessThan(1000);
    },
    30_000,
  );
});
