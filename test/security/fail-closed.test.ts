// Fail closed, always: a broken store, a broken hook or a stale cache can cost availability (503),
// never let a request through.
import {
  type ApiKeyRecord,
  authenticate,
  CachedKeyStore,
  hashKey,
  KeyManager,
  type KeyStore,
  MemoryKeyStore,
  UsageRecorder,
} from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { HEADERS } from '../frameworks/cases.js';
import { startApps } from './support/apps.js';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live', permissions: ['email:verify'] });
const hash = await hashKey(secret);
const record = (await store.findById(key.id)) as ApiKeyRecord;

const answering = (value: unknown): KeyStore => ({ findByHash: async () => value as ApiKeyRecord });
const without = (field: keyof ApiKeyRecord) => {
  const { [field]: _gone, ...rest } = record;
  return rest;
};

describe('a store that answers garbage gives 503 key_store_unavailable', () => {
  it.each<[string, unknown]>([
    ['an array', [record]],
    ['a number', 42],
    ['a string', JSON.stringify(record)],
    ['true', true],
    ['an empty object', {}],
    ['a record with another key’s digest', { ...record, hash: 'f'.repeat(64) }],
    ['a record with an upper-case digest', { ...record, hash: hash.toUpperCase() }],
    ['a record without its digest', without('hash')],
    ['a record without allowedIps', without('allowedIps')],
    ['allowedIps that is a string', { ...record, allowedIps: '0.0.0.0/0' }],
    ['allowedIps holding a non-address', { ...record, allowedIps: ['everyone'] }],
    ['allowedIps holding a number', { ...record, allowedIps: [0] }],
    ['permissions that is a number', { ...record, permissions: 7 }],
    ['an expiry that is not a date', { ...record, expiresAt: 'next year' }],
  ])('%s', async (_, value) => {
    const result = await authenticate({ headers: { 'x-api-key': secret }, ip: '198.51.100.7' }, answering(value));
    expect(result).toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it.each<[string, unknown]>([
    ['status in another case', { ...record, status: 'ACTIVE' }],
    ['no status', without('status')],
    ['status null', { ...record, status: null }],
    ['permissions as one string', { ...record, permissions: 'email:verify' }],
    ['no permissions', without('permissions')],
  ])('and a record with %s is never an allow', async (_, value) => {
    const result = await authenticate({ headers: { 'x-api-key': secret } }, answering(value), {
      permissions: ['email:verify'],
    });
    expect(result.ok).toBe(false);
  });

  it.each<[string, () => KeyStore]>([
    [
      'throws synchronously',
      () => ({
        findByHash: () => {
          throw new Error('boom');
        },
      }),
    ],
    ['rejects with a non-Error', () => ({ findByHash: () => Promise.reject('nope') })],
    [
      'peek throws',
      () => ({
        peek: () => {
          throw new Error('boom');
        },
        findByHash: async () => record,
      }),
    ],
    [
      'returns a thenable that never settles',
      // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is exactly the input under test
      () => ({ findByHash: () => ({ then() {} }) as never }),
    ],
  ])('a store that %s', async (_, make) => {
    const result = await authenticate({ headers: { 'x-api-key': secret } }, make(), { timeoutMs: 20 });
    expect(result).toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });
});

describe('a user hook that fails never turns a denial into an allow, on every adapter', async () => {
  const recorder = new UsageRecorder({
    store,
    intervalMs: 0,
    onEvent: () => {
      throw new Error('event sink down');
    },
  });
  const hooks = {
    'onDenied throws': {
      onDenied: () => {
        throw new Error('hook bug');
      },
    },
    'onDenied rejects': { onDenied: async () => Promise.reject(new Error('hook bug')) },
    'onResult throws': {
      onResult: () => {
        throw new Error('observer bug');
      },
    },
    'onEvent throws (UsageRecorder)': { onResult: recorder.record },
  };
  const running = await Promise.all(
    Object.entries(hooks).map(
      async ([name, hook]) => [name, await startApps({ store, ...(hook as object) }, true)] as const,
    ),
  );
  afterAll(() => Promise.all(running.map(([, apps]) => apps.close())));
  const respond = createDenialResponder({ retryAfterMs: 7000 });

  const rows = running.flatMap(([hook, apps]) =>
    apps.adapters.flatMap(([adapter, send]) =>
      (
        [
          ['no key', [], 'missing_api_key'],
          ['a wrong key', [['x-api-key', `${secret.slice(0, -1)}!`]], 'malformed_api_key'],
          ['a revoked key', 'revoked', 'revoked_api_key'],
        ] as const
      ).map(([what, headers, code]) => ({ hook, adapter, what, send, headers, code })),
    ),
  );
  const revoked = await keys.create({ accountId: 'a', name: 'r', mode: 'live', permissions: ['email:verify'] });
  await keys.revoke(revoked.key.id);

  it.each(rows)('$hook, $adapter, $what: still $code', async ({ send, headers, code }) => {
    const lines = headers === 'revoked' ? [['x-api-key', revoked.secret] as [string, string]] : [...headers];
    const got = await send({ path: '/v1/check', headers: lines as Array<[string, string]> });
    const want = respond({ code });
    expect(got).toEqual({
      status: want.status,
      headers: Object.fromEntries(HEADERS.map((h) => [h, want.headers[h] ?? null])),
      body: want.body,
    });
  });

  it.each(running.flatMap(([hook, apps]) => apps.adapters.map(([adapter, send]) => ({ hook, adapter, send }))))(
    '$hook, $adapter: a valid key still gets through',
    async ({ send }) => {
      const got = await send({ path: '/v1/check', headers: [['x-api-key', secret]] });
      expect(got.status).toBe(200);
    },
  );
});

describe('a revoked key cached anywhere is refused within the documented delay', () => {
  it('at once, when it is revoked through a KeyManager over the cache or the store it wraps', async () => {
    for (const via of ['cache', 'store'] as const) {
      const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
      const created = await keys.create({ accountId: 'a', name: via, mode: 'live' });
      expect((await authenticate({ headers: { 'x-api-key': created.secret } }, cached)).ok).toBe(true);
      await new KeyManager({ store: via === 'cache' ? cached : store }).revoke(created.key.id);
      expect(await authenticate({ headers: { 'x-api-key': created.secret } }, cached)).toMatchObject({
        code: 'revoked_api_key',
      });
      cached.close();
    }
  });

  it('within the cache TTL when no change reaches the cache (measured; 1 s upper bound)', async () => {
    // A store with no change channel: the cache cannot hear the revoke and must age the entry out.
    const deaf: KeyStore = { findByHash: (h) => store.findByHash(h) };
    const ttlMs = 300;
    const cached = new CachedKeyStore(deaf, { ttlMs });
    const created = await keys.create({ accountId: 'a', name: 'deaf', mode: 'live' });
    expect((await authenticate({ headers: { 'x-api-key': created.secret } }, cached)).ok).toBe(true);
    const start = performance.now();
    await keys.revoke(created.key.id);
    let result = await authenticate({ headers: { 'x-api-key': created.secret } }, cached);
    while (result.ok) {
      await new Promise((r) => setTimeout(r, 5));
      result = await authenticate({ headers: { 'x-api-key': created.secret } }, cached);
    }
    const delay = performance.now() - start;
    expect(result).toMatchObject({ code: 'revoked_api_key' });
    expect(delay).toBeLessThan(1000);
  });
});
