import { capabilityOf, KeyManager } from 'keygate';
import { type RedisClientLike, RedisKeyStore } from 'keygate/redis';
import type { AuditLog } from 'keygate/store-kit';
import { describeAuditLogContract } from 'keygate/testing';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:audit:`;

/** What these tests need of a node-redis client, whichever major it is. */
interface TestClient extends RedisClientLike {
  connect(): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface Flavour {
  name: string;
  create(): { client: TestClient; end(): Promise<unknown> };
}

// The newest major (the main devDependency) and the oldest the peer range allows (`redis4` alias).
const FLAVOURS: Flavour[] = [
  {
    name: 'node-redis 6',
    create() {
      const client = createClient6({ url: REDIS_URL });
      return { client: client as unknown as TestClient, end: async () => client.destroy() };
    },
  },
  {
    name: 'node-redis 4.6',
    create() {
      const client = createClient4({ url: REDIS_URL });
      return { client: client as unknown as TestClient, end: () => client.disconnect() };
    },
  },
];
const ends: (() => Promise<unknown>)[] = [];

async function connected(flavour: Flavour = FLAVOURS[0] as Flavour): Promise<TestClient> {
  const { client, end } = flavour.create();
  client.on('error', () => {});
  ends.push(() => end().catch(() => {}));
  await client.connect();
  return client;
}

afterAll(async () => {
  if (!available) return;
  const admin = await connected();
  const keys = (await admin.sendCommand(['KEYS', `${PREFIX}*`])) as string[];
  for (let i = 0; i < keys.length; i += 500) await admin.sendCommand(['DEL', ...keys.slice(i, i + 500)]);
  for (const end of ends) await end();
});

let accounts = 0;
const freshAccount = (label: string) => `${label}_${RUN_ID}_${++accounts}`;
const logOf = (client: TestClient) => capabilityOf(new RedisKeyStore({ client, prefix: PREFIX }), 'audit') as AuditLog;

describe.skipIf(!available).each(FLAVOURS)('RedisKeyStore audit log on $name', (flavour) => {
  // Two connections, as two processes would hold them.
  let connections: [TestClient, TestClient] | undefined;
  describeAuditLogContract(
    'RedisKeyStore',
    async () => {
      connections ??= [await connected(flavour), await connected(flavour)];
      return { log: logOf(connections[0]), peer: logOf(connections[1]) };
    },
    { describe, it, expect, beforeEach, afterEach },
  );

  it('keeps an account and each of its keys in sorted sets under the prefix, ids URI-encoded', async () => {
    const client = await connected(flavour);
    const account = freshAccount('acct:{odd}:');
    const entry = await logOf(client).append({
      at: new Date().toISOString(),
      accountId: account,
      keyId: 'key_1',
      action: 'key.created',
      actor: { type: 'api' },
    });
    const accountSet = `${PREFIX}audit:${encodeURIComponent(account)}`;
    expect(accountSet).not.toContain('{odd}');
    for (const set of [accountSet, `${accountSet}:key_1`]) {
      const members = (await client.sendCommand(['ZRANGE', set, '0', '-1'])) as string[];
      expect(members).toHaveLength(1);
      expect(members[0]?.startsWith(`${entry.id} {`)).toBe(true);
    }
  });

  it('shows what a manager on one connection did to a manager on another', async () => {
    const account = freshAccount('acct_two');
    const here = new KeyManager({ store: new RedisKeyStore({ client: await connected(flavour), prefix: PREFIX }) });
    const there = new KeyManager({ store: new RedisKeyStore({ client: await connected(flavour), prefix: PREFIX }) });
    const { key } = await here.create({ accountId: account, name: 'ci', mode: 'test' });
    await there.update(key.id, { name: 'ci-2' }, { actor: { type: 'cli', id: 'bob' } });
    const entries = await there.audit({ accountId: account, keyId: key.id });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['key.updated', { type: 'cli', id: 'bob' }],
      ['key.created', { type: 'api' }],
    ]);
    expect(entries[0]?.changes).toEqual({ name: { before: 'ci', after: 'ci-2' } });
    expect(await here.audit({ accountId: account })).toEqual(entries);
  });
});
