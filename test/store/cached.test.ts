import {
  type ApiKeyRecord,
  authenticate,
  CachedKeyStore,
  generateKey,
  hashKey,
  KeyManager,
  type KeyStore,
  KeyStoreUnavailableError,
  MemoryKeyStore,
  type WritableKeyStore,
} from 'keygate';
import { CAPABILITIES, type KeyChangeEvent } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { countingStore, hangingStore } from '../support/fixtures.js';

async function setup(options = {}) {
  const memory = new MemoryKeyStore();
  const counted = countingStore(memory);
  const cached = new CachedKeyStore(counted, options);
  const keys = new KeyManager({ store: memory });
  const created = await keys.create({ accountId: 'acct_1', name: 'k', mode: 'test', permissions: ['email:verify'] });
  const auth = (ip = '203.0.113.7') => authenticate({ headers: { 'x-api-key': created.secret }, ip }, cached);
  return { memory, counted, cached, keys, created, auth };
}

describe('CachedKeyStore', () => {
  it('serves a found key from memory after the first lookup', async () => {
    const { counted, auth } = await setup();
    for (let i = 0; i < 5; i++) expect((await auth()).ok).toBe(true);
    expect(counted.calls).toBe(1);
  });

  it('remembers unknown digests too, in a separate bounded cache', async () => {
    const { counted, cached } = await setup({ negativeMax: 2 });
    const unknown = generateKey();
    for (let i = 0; i < 3; i++) {
      expect(await authenticate({ headers: { 'x-api-key': unknown } }, cached)).toMatchObject({
        code: 'invalid_api_key',
      });
    }
    expect(counted.calls).toBe(1);
    // A flood of distinct unknown keys churns only the negative cache: 3 more distinct misses evict the first.
    for (let i = 0; i < 3; i++) await authenticate({ headers: { 'x-api-key': generateKey() } }, cached);
    await authenticate({ headers: { 'x-api-key': unknown } }, cached);
    expect(counted.calls).toBe(5);
  });

  it('reports its size, never above its bounds, under a flood of 500 distinct unknown keys', async () => {
    const { cached, auth } = await setup({ max: 10, negativeMax: 50 });
    expect(cached.size).toEqual({ found: 0, missing: 0, inflight: 0 });
    await auth();
    for (let i = 0; i < 500; i++) await authenticate({ headers: { 'x-api-key': generateKey() } }, cached);
    expect(cached.size).toEqual({ found: 1, missing: 50, inflight: 0 });
    cached.clear();
    expect(cached.size).toEqual({ found: 0, missing: 0, inflight: 0 });
  });

  it('shares one in-flight lookup among 1,000 concurrent requests for the same key', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const slow: KeyStore = {
      async findByHash(hash) {
        calls++;
        await gate;
        return memory.findByHash(hash);
      },
    };
    const cached = new CachedKeyStore(slow);
    const pending = Array.from({ length: 1000 }, () => authenticate({ headers: { 'x-api-key': secret } }, cached));
    await new Promise((r) => setTimeout(r, 10));
    release();
    const results = await Promise.all(pending);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(calls).toBe(1);
  });

  it('never caches a failure and never serves a stale allow when the store fails', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    let down = true;
    const flaky: KeyStore = {
      async findByHash(hash) {
        if (down) throw new Error('store down');
        return memory.findByHash(hash);
      },
    };
    const cached = new CachedKeyStore(flaky, { ttlMs: 30 });
    const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
    expect(await auth()).toMatchObject({ status: 503 });
    down = false;
    expect((await auth()).ok).toBe(true);
    // Past its TTL the entry is gone: with the store down again the answer is 503, not the old allow.
    down = true;
    await new Promise((r) => setTimeout(r, 60));
    expect(await auth()).toMatchObject({ status: 503 });
  });

  it('drops entries after their TTL (the bound on revocation delay without a change channel)', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    // A store without the `changes` capability: the cache cannot hear about changes, only the TTL bounds them.
    const deaf: KeyStore = { findByHash: (h) => memory.findByHash(h) };
    const cached = new CachedKeyStore(deaf, { ttlMs: 50 });
    const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
    expect((await auth()).ok).toBe(true);
    await keys.revoke(key.id);
    expect((await auth()).ok).toBe(true); // still cached: the documented delay
    await new Promise((r) => setTimeout(r, 80));
    expect(await auth()).toMatchObject({ code: 'revoked_api_key' });
  });

  it('is invalidated at once by a revocation made through a KeyManager on the wrapped store', async () => {
    const { keys, created, auth } = await setup({ ttlMs: 3_600_000 });
    expect((await auth()).ok).toBe(true);
    await keys.revoke(created.key.id);
    expect(await auth()).toMatchObject({ status: 401, code: 'revoked_api_key' });
  });

  it('is invalidated at once by changes made through a KeyManager over the cache itself', async () => {
    const { cached, created, auth } = await setup({ ttlMs: 3_600_000 });
    const keys = new KeyManager({ store: cached });
    expect((await auth()).ok).toBe(true);
    await keys.update(created.key.id, { allowedIps: ['198.51.100.0/24'] });
    expect(await auth('203.0.113.7')).toMatchObject({ status: 403, code: 'ip_not_allowed' });
    expect((await auth('198.51.100.1')).ok).toBe(true);
  });

  it('forgets a remembered unknown digest as soon as a key with that digest is created', async () => {
    const memory = new MemoryKeyStore();
    const cached = new CachedKeyStore(memory, { ttlMs: 3_600_000 });
    const keys = new KeyManager({ store: memory });
    // Guessing is impossible, so replay: look the digest up before the record exists.
    const secret = generateKey();
    const hash = await hashKey(secret);
    expect(await cached.findByHash(hash)).toBeNull();
    const record: ApiKeyRecord = {
      ...(await keys.create({ accountId: 'a', name: 'other', mode: 'test' })).key,
      id: 'key_manual',
      hash,
      version: 1,
    };
    await memory.insert(record);
    expect((await cached.findByHash(hash))?.id).toBe('key_manual');
  });

  it('does not put back a record loaded before a change that arrived while the load was in flight', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const hash = await hashKey(secret);
    const before = await memory.findByHash(hash);
    let release!: () => void;
    const slow: KeyStore = {
      findByHash: () =>
        new Promise((r) => {
          release = () => r(before);
        }),
    };
    const cached = new CachedKeyStore(slow);
    const stale = cached.findByHash(hash);
    const revoked = await keys.revoke(key.id);
    cached.invalidate({ hash, id: key.id, version: revoked.version });
    release();
    expect((await stale)?.status).toBe('active'); // the in-flight caller sees what it asked before the change
    expect(cached.peek(hash)).toBeUndefined(); // but it was not cached
  });

  it('refuses a cached record older than the newest version announced for its id', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const hash = await hashKey(secret);
    const old = await memory.findByHash(hash);
    const cached = new CachedKeyStore({ findByHash: async () => old });
    cached.invalidate({ hash, id: key.id, version: 5 });
    await cached.findByHash(hash);
    expect(cached.peek(hash)).toBeUndefined();
  });

  it('a lookup that never settles fails with 503 after its timeout, and the next request asks the store again', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    let calls = 0;
    // The first lookup hangs for good (a lost reply); later ones answer.
    const hangsOnce: KeyStore = {
      findByHash: (hash) => (++calls === 1 ? new Promise<never>(() => {}) : memory.findByHash(hash)),
    };
    const cached = new CachedKeyStore(hangsOnce, { timeoutMs: 50 });
    const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
    const hung = await Promise.all([auth(), auth(), auth()]);
    expect(hung.map((r) => [r.status, !r.ok && r.code])).toEqual(Array(3).fill([503, 'key_store_unavailable']));
    expect(cached.size.inflight).toBe(0);
    expect(await auth()).toMatchObject({ ok: true, status: 200 });
    expect(calls).toBe(2);
  });

  it('distinct hung keys do not pile up: each times out with key_store_unavailable and leaves no entry', async () => {
    const cached = new CachedKeyStore(hangingStore, { timeoutMs: 20 });
    const hashes = await Promise.all(Array.from({ length: 200 }, () => hashKey(generateKey())));
    const outcomes = await Promise.allSettled(hashes.map((h) => cached.findByHash(h)));
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const reason = (o as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(KeyStoreUnavailableError);
      expect(reason).toMatchObject({ code: 'key_store_unavailable' });
    }
    expect(cached.size).toEqual({ found: 0, missing: 0, inflight: 0 });
  });

  it('empties itself when the store announces a resync (its channel reconnected)', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    let announce!: (change: KeyChangeEvent) => void;
    const changes = {
      subscribe(listener: (change: KeyChangeEvent) => void) {
        announce = listener;
        return () => {};
      },
    };
    const store: WritableKeyStore = Object.assign(Object.create(memory) as MemoryKeyStore, {
      [CAPABILITIES]: { changes },
    });
    const cached = new CachedKeyStore(store, { ttlMs: 3_600_000 });
    expect((await authenticate({ headers: { 'x-api-key': secret } }, cached)).ok).toBe(true);
    await cached.findByHash(await hashKey(generateKey()));
    expect(cached.size).toMatchObject({ found: 1, missing: 1 });
    announce({ type: 'resync' });
    expect(cached.size).toEqual({ found: 0, missing: 0, inflight: 0 });
  });

  it.each([
    [{ max: 0 }],
    [{ ttlMs: -1 }],
    [{ ttlMs: 1.5 }],
    [{ negativeMax: 0 }],
    [{ timeoutMs: 0 }],
    [{ timeoutMs: Infinity }],
  ])('refuses unbounded or invalid options %j', (options) => {
    expect(() => new CachedKeyStore(new MemoryKeyStore(), options)).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });
});
