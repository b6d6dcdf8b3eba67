import { PGlite } from '@electric-sql/pglite';
import {
  authenticate,
  CachedKeyStore,
  generateKey,
  hashKey,
  type ImportKeyInput,
  type KeygateEvent,
  KeyManager,
  keyHint,
  MemoryKeyStore,
  type WritableKeyStore,
} from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const base = { accountId: 'acct_1', name: 'legacy', permissions: ['email:verify'] };

function manager(options: { pepper?: string; prefix?: string } = {}) {
  const store = new MemoryKeyStore();
  const events: KeygateEvent[] = [];
  const keys = new KeyManager({ store, clock: () => NOW, onEvent: (e) => void events.push(e), ...options });
  return { store, keys, events };
}

const auth = (store: WritableKeyStore, secret: string, options: { pepper?: string; prefix?: string } = {}) =>
  authenticate({ headers: { 'x-api-key': secret } }, store, { permissions: ['email:verify'], ...options });

/** A key as another system would hold it: only its SHA-256, its hint and its mode. */
async function external(mode: 'live' | 'test' = 'live') {
  const secret = generateKey({ mode });
  const digest = { algorithm: 'sha256' as const, hex: await hashKey(secret) };
  return { secret, kept: { digest, hint: keyHint(secret), mode } };
}

describe('KeyManager.import from a raw key', () => {
  it('stores the digest and hint, takes the mode from the key, and the key then authenticates', async () => {
    const { store, keys, events } = manager();
    const secret = generateKey({ mode: 'live' });
    const key = await keys.import({ ...base, secret, allowedIps: ['203.0.113.0/24'] });
    expect(key).toMatchObject({
      ...base,
      mode: 'live',
      status: 'active',
      hint: keyHint(secret),
      allowedIps: ['203.0.113.0/24'],
      createdAt: '2026-11-22T12:00:00.000Z',
      version: 1,
    });
    expect('secret' in key || 'hash' in key).toBe(false);
    const stored = await store.findById(key.id);
    expect(stored?.hash).toBe(await hashKey(secret));
    expect(JSON.stringify([stored, key, events])).not.toContain(secret);
    const result = await authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.9' }, store);
    expect(result).toMatchObject({ ok: true, key: { id: key.id } });
  });

  it('hashes with the manager pepper and checks the manager prefix', async () => {
    const { store, keys } = manager({ pepper: 'server-secret', prefix: 'acme' });
    const secret = generateKey({ prefix: 'acme', mode: 'test' });
    await keys.import({ ...base, secret });
    expect((await auth(store, secret, { pepper: 'server-secret', prefix: 'acme' })).ok).toBe(true);
    expect(await auth(store, secret, { prefix: 'acme' })).toMatchObject({ code: 'invalid_api_key' });
  });

  it('emits key.created marked imported; create does not mark it', async () => {
    const { keys, events } = manager();
    const created = await keys.create({ ...base, mode: 'test' });
    const imported = await keys.import({ ...base, secret: generateKey() });
    expect(events.map((e) => [e.type, e.keyId, e.imported])).toEqual([
      ['key.created', created.key.id, undefined],
      ['key.created', imported.id, true],
    ]);
  });
});

describe('KeyManager.import from a digest', () => {
  it('takes the digest (any letter case), hint and mode another system kept; the raw key then authenticates', async () => {
    const { store, keys } = manager();
    const { secret, kept } = await external('test');
    const key = await keys.import({ ...base, ...kept, digest: { ...kept.digest, hex: kept.digest.hex.toUpperCase() } });
    expect(key).toMatchObject({ mode: 'test', hint: kept.hint });
    expect((await store.findById(key.id))?.hash).toBe(kept.digest.hex);
    expect(await auth(store, secret)).toMatchObject({ ok: true, key: { id: key.id } });
  });

  it('takes an HMAC-SHA-256 digest when the manager has the pepper it was made with', async () => {
    const { store, keys } = manager({ pepper: 'server-secret' });
    const secret = generateKey({ mode: 'live' });
    const digest = { algorithm: 'hmac-sha256' as const, hex: await hashKey(secret, 'server-secret') };
    await keys.import({ ...base, digest, hint: keyHint(secret), mode: 'live' });
    expect((await auth(store, secret, { pepper: 'server-secret' })).ok).toBe(true);
  });
});

describe('KeyManager.import refuses bad input, naming the field, and writes nothing', async () => {
  const secret = generateKey({ mode: 'live' });
  const { secret: oldSecret, kept: old } = await external('live');
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a malformed secret', { secret: `${secret.slice(0, -1)}x` }, 'secret'],
    ['a secret with another prefix', { secret: generateKey({ prefix: 'acme' }) }, 'secret'],
    ['a secret that is not a string', { secret: 42 }, 'secret'],
    ['a secret and a mode', { secret, mode: 'live' }, 'mode'],
    ['a secret and a digest', { secret, digest: old.digest, hint: old.hint }, 'digest'],
    ['neither a secret nor a digest', { hint: old.hint, mode: 'live' }, 'secret'],
    ['a digest that is not an object', { ...old, digest: old.digest.hex }, 'digest'],
    ['an unknown algorithm', { ...old, digest: { algorithm: 'md5', hex: old.digest.hex } }, 'digest.algorithm'],
    [
      'an HMAC digest without a pepper',
      { ...old, digest: { ...old.digest, algorithm: 'hmac-sha256' } },
      'digest.algorithm',
    ],
    ['a short digest', { ...old, digest: { ...old.digest, hex: old.digest.hex.slice(1) } }, 'digest.hex'],
    ['a digest that is not hex', { ...old, digest: { ...old.digest, hex: 'g'.repeat(64) } }, 'digest.hex'],
    ['an unknown mode', { ...old, mode: 'prod' }, 'mode'],
    ['no hint', { ...old, hint: undefined }, 'hint'],
    ['the raw key as hint', { ...old, hint: oldSecret }, 'hint'],
    ['a hint of the other mode', { ...old, hint: old.hint.replace('_live_', '_test_') }, 'hint'],
    ['a hint of another prefix', { ...old, hint: old.hint.replace('mk_', 'xk_') }, 'hint'],
    ['an empty account', { ...old, accountId: '' }, 'accountId'],
    ['an empty name', { ...old, name: ' ' }, 'name'],
    ['a bad allow-list entry', { ...old, allowedIps: ['10/8'] }, 'allowedIps[0]'],
    ['a past expiry', { ...old, expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
  ];
  it.each(bad)('%s -> %s', async (_, input, field) => {
    const { store, keys } = manager();
    const error = await keys.import({ ...base, ...input } as unknown as ImportKeyInput).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'InvalidInputError', code: 'invalid_input', field });
    expect((error as Error).message).not.toContain(secret.slice(8));
    expect((error as Error).message).not.toContain(oldSecret.slice(8));
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });

  it('refuses input that is not an object', async () => {
    const { keys } = manager();
    await expect(keys.import(null as never)).rejects.toMatchObject({ code: 'invalid_input', field: 'input' });
  });
});

describe('KeyManager.import of a digest already stored', () => {
  it.each([
    ['from the raw key', (secret: string) => ({ ...base, secret })],
    [
      'from the digest',
      async (secret: string) => ({
        ...base,
        digest: { algorithm: 'sha256' as const, hex: await hashKey(secret) },
        hint: keyHint(secret),
        mode: 'test' as const,
      }),
    ],
  ])('%s is a key_conflict naming the key that holds it', async (_, input) => {
    const { store, keys } = manager();
    const created = await keys.create({ ...base, mode: 'test' });
    await expect(keys.import(await input(created.secret))).rejects.toMatchObject({
      code: 'key_conflict',
      keyId: created.key.id,
    });
    expect(await store.listByAccount('acct_1')).toHaveLength(1);
  });
});

// A key brought in by digest must work wherever keys live. Each store is used as a service would:
// authenticate through a CachedKeyStore that had already seen the key as unknown before the import.
describe('a key imported by digest authenticates through every store', async () => {
  const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
  const redisUp = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const stores: Array<[string, boolean, () => Promise<WritableKeyStore & { close?(): void }>]> = [
    ['MemoryKeyStore', true, async () => new MemoryKeyStore()],
    [
      'PostgresKeyStore over PGlite',
      true,
      async () => {
        const db = new PGlite();
        cleanups.push(() => db.close());
        const store = new PostgresKeyStore({ client: db, schema: 'import_test' });
        await store.migrate();
        return store;
      },
    ],
    [
      'PostgresKeyStore over PostgreSQL',
      pgUp,
      async () => {
        const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
        const schema = `keygate_import_${RUN_ID}`;
        cleanups.push(async () => {
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await pool.end();
        });
        const store = new PostgresKeyStore({ client: pool, schema });
        await store.migrate();
        return store;
      },
    ],
    [
      'RedisKeyStore',
      redisUp,
      async () => {
        const client = await createClient({ url: REDIS_URL }).connect();
        const prefix = `keygate:test:${RUN_ID}:import:`;
        cleanups.push(async () => {
          for await (const found of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
            if (found.length > 0) await client.del(found);
          }
          client.destroy();
        });
        return new RedisKeyStore({ client, prefix });
      },
    ],
  ];

  // A store whose service is not running is reported as skipped, never as a pass.
  for (const [name, available, open] of stores) {
    it.skipIf(!available)(name, async () => {
      const store = await open();
      const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
      const { secret, kept } = await external('live');
      try {
        expect(await auth(cached, secret)).toMatchObject({ status: 401, code: 'invalid_api_key' });
        const key = await new KeyManager({ store: cached }).import({ ...base, ...kept });
        expect(await auth(cached, secret)).toMatchObject({ ok: true, key: { id: key.id, mode: 'live' } });
        expect(await auth(store, secret)).toMatchObject({ ok: true, key: { id: key.id } });
        await expect(new KeyManager({ store }).import({ ...base, ...kept })).rejects.toMatchObject({
          code: 'key_conflict',
          keyId: key.id,
        });
      } finally {
        cached.close();
        store.close?.();
      }
    });
  }
});
