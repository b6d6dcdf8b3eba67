import { join } from 'node:path';
import { authenticate, CachedKeyStore, KeyManager, type KeyStore, type WritableKeyStore } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from './support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

// Children run the TypeScript sources, bundled by esbuild (see support/child-process.ts).
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;

beforeAll(async () => {
  if (postgres || redis) bundle = await bundleChild(join(import.meta.dirname, 'support/cross-process-child.ts'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

const child = (args: Record<string, unknown>) => startChild(bundle!.file, args, cleanups);

interface Backend {
  kind: 'postgres' | 'redis';
  url: string;
  namespace: string;
  store: WritableKeyStore;
}

async function pgBackend(): Promise<Backend> {
  const pool = new pg.Pool({ connectionString: PG_URL });
  const namespace = `keygate_x${RUN_ID}`;
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
    await pool.end();
  });
  const store = new PostgresKeyStore({ client: pool, schema: namespace });
  await store.migrate();
  return { kind: 'postgres', url: PG_URL, namespace, store };
}

async function redisBackend(): Promise<Backend> {
  const client = await createClient({ url: REDIS_URL }).connect();
  const namespace = `keygate:test:${RUN_ID}:x:`;
  cleanups.push(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${namespace}*` })) if (keys.length) await client.del(keys);
    client.destroy();
  });
  return { kind: 'redis', url: REDIS_URL, namespace, store: new RedisKeyStore({ client, prefix: namespace }) };
}

const backends = [
  { name: 'postgres', available: postgres, open: pgBackend },
  { name: 'redis', available: redis, open: redisBackend },
].filter((b) => b.available);

// Returns once process `a` has seen a change made here: its channel is live, so a measurement can start.
async function channelLive(a: ReturnType<typeof child>, keys: KeyManager, probeId: string): Promise<void> {
  const live = a.next('channel');
  let probing = true;
  const stop = () => {
    probing = false;
  };
  live.then(stop, stop);
  for (let i = 0; probing && i < 100; i++) {
    await keys.update(probeId, { name: `probe ${i}` });
    await new Promise((r) => setTimeout(r, 100));
  }
  await live;
}

describe.skipIf(backends.length === 0)('revocation and suspension across processes', () => {
  it.each(backends)('process A refuses a key within 1 s of process B revoking it ($name)', async ({ name, open }) => {
    const backend = await open();
    const keys = new KeyManager({ store: backend.store });
    const { secret, key } = await keys.create({ accountId: 'acct_x', name: 'victim', mode: 'live' });
    const probe = await keys.create({ accountId: 'acct_x', name: 'probe', mode: 'test' });
    const common = { kind: backend.kind, url: backend.url, namespace: backend.namespace };

    const a = child({ ...common, role: 'watch', secret });
    await a.next('ready');
    await channelLive(a, keys, probe.key.id);

    const b = child({ ...common, role: 'revoke', id: key.id });
    const revoked = await b.next('revoked');
    const refused = await a.next('refused');
    // Measured from the start of B's revoke call (connection set-up included), so it is an upper bound.
    const delay = Number(refused.at) - Number(revoked.startedAt);
    const afterReturn = Number(refused.at) - Number(revoked.returnedAt);
    console.log(
      `revocation delay (${name}): ${delay.toFixed(1)} ms from the revoke call in process B to the first refusal in process A (${afterReturn.toFixed(1)} ms after the call returned)`,
    );
    expect(refused.code).toBe('revoked_api_key');
    expect(delay).toBeLessThan(1000);
  });

  it.each(backends)(
    'process A refuses a key within 1 s of process B suspending it (403 key_suspended), and takes it again within 1 s of a resumption ($name)',
    async ({ open }) => {
      const backend = await open();
      const keys = new KeyManager({ store: backend.store });
      const { secret, key } = await keys.create({ accountId: 'acct_s', name: 'paused', mode: 'live' });
      const probe = await keys.create({ accountId: 'acct_s', name: 'probe', mode: 'test' });
      const common = { kind: backend.kind, url: backend.url, namespace: backend.namespace };

      const a = child({ ...common, role: 'watch', secret, untilAllowed: true });
      await a.next('ready');
      await channelLive(a, keys, probe.key.id);

      const suspended = await child({ ...common, role: 'suspend', id: key.id }).next('suspended');
      const refused = await a.next('refused');
      expect(refused.code).toBe('key_suspended');
      expect(Number(refused.at) - Number(suspended.startedAt)).toBeLessThan(1000);

      const resumed = await child({ ...common, role: 'resume', id: key.id }).next('resumed');
      const allowed = await a.next('allowed');
      expect(Number(allowed.at) - Number(resumed.startedAt)).toBeLessThan(1000);
    },
  );

  it.each(backends)(
    'with no change channel, a cache still drops a revoked key within its TTL ($name)',
    async ({ open }) => {
      const backend = await open();
      const keys = new KeyManager({ store: backend.store });
      const { secret, key } = await keys.create({ accountId: 'acct_y', name: 'victim', mode: 'live' });
      // This cache only sees findByHash: no change reaches it, as when the channel is down.
      const deaf: KeyStore = { findByHash: (hash) => backend.store.findByHash(hash) };
      const ttlMs = 1000;
      const cached = new CachedKeyStore(deaf, { ttlMs });
      const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
      expect(await auth()).toMatchObject({ ok: true });
      await keys.revoke(key.id);
      // The documented window: until its TTL runs out the cache still holds the old verdict...
      expect(await auth()).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, ttlMs + 100));
      // ...and after it, the store's answer.
      expect(await auth()).toMatchObject({ ok: false, code: 'revoked_api_key' });
    },
  );
});
