// Telemetry as an operator sees it: what authenticate, an adapter, CachedKeyStore, a store and
// UsageRecorder report through the OpenTelemetry SDK's in-memory reader and span exporter.
import { PGlite } from '@electric-sql/pglite';
import { Hono } from 'hono';
import { authenticate, CachedKeyStore, generateKey, MemoryKeyStore, UsageRecorder } from 'keygate';
import { apiKeyAuth } from 'keygate/hono';
import { PostgresKeyStore } from 'keygate/postgres';
import { CAPABILITIES, METRICS } from 'keygate/store-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { failingStore, hangingStore, seededStore } from '../support/fixtures.js';
import { memoryTelemetry } from './support.js';

let sdk = memoryTelemetry();
afterEach(async () => {
  await sdk.shutdown();
  sdk = memoryTelemetry();
});

const request = (key: string | undefined, ip = '203.0.113.7') => ({ headers: key ? { 'x-api-key': key } : {}, ip });

describe('authenticate with telemetry', () => {
  it('counts every outcome by code and mode, and times each one in seconds', async () => {
    const { store, valid, revoked } = await seededStore();
    const options = { telemetry: sdk.options };
    await authenticate(request(valid.secret), store, options);
    await authenticate(request(valid.secret), store, options);
    await authenticate(request(revoked.secret), store, options);
    await authenticate(request(undefined), store, options);
    await authenticate(request('mk_live_short'), store, options);
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.outcome': 'allowed', 'keygate.key.mode': 'live' })).toBe(
      2,
    );
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.code': 'revoked_api_key' })).toBe(1);
    expect(
      await sdk.total(METRICS.requests, { 'keygate.auth.code': 'missing_api_key', 'keygate.key.mode': 'none' }),
    ).toBe(1);
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.code': 'malformed_api_key' })).toBe(1);
    expect(await sdk.total(METRICS.duration)).toBe(5);
  });

  it('records the 503 of a failing store, and never lets telemetry change an outcome', async () => {
    const result = await authenticate(request(generateKey()), failingStore, { telemetry: sdk.options });
    expect(result).toMatchObject({ status: 503, code: 'key_store_unavailable' });
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.code': 'key_store_unavailable' })).toBe(1);
  });

  it('reaches the metrics through an adapter, which passes its core options on', async () => {
    const { store, open } = await seededStore();
    const app = new Hono();
    app.use('/v1/*', apiKeyAuth({ store, telemetry: sdk.options }));
    app.get('/v1/me', (c) => c.text('ok'));
    expect((await app.request('/v1/me', { headers: { 'x-api-key': open.secret } })).status).toBe(200);
    expect((await app.request('/v1/me')).status).toBe(401);
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.outcome': 'allowed', 'keygate.key.mode': 'test' })).toBe(
      1,
    );
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.outcome': 'denied' })).toBe(1);
  });

  it('refuses something that is not a meter when the options are built, naming the field', () => {
    expect(() => apiKeyAuth({ store: new MemoryKeyStore(), telemetry: { meter: {} as never } })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'telemetry.meter' }),
    );
  });
});

describe('CachedKeyStore with telemetry', () => {
  it('counts hits, remembered unknown keys and misses, and spans each lookup a miss sends to the store', async () => {
    const { store, open } = await seededStore();
    const cached = new CachedKeyStore(store, { telemetry: sdk.options });
    const unknown = generateKey();
    for (const key of [open.secret, open.secret, open.secret, unknown, unknown])
      await authenticate(request(key), cached);
    expect(await sdk.total(METRICS.cache, { 'keygate.cache.result': 'miss' })).toBe(2);
    expect(await sdk.total(METRICS.cache, { 'keygate.cache.result': 'hit' })).toBe(2);
    expect(await sdk.total(METRICS.cache, { 'keygate.cache.result': 'negative_hit' })).toBe(1);
    const spans = sdk.spans();
    expect(spans.map((s) => [s.name, s.attributes['keygate.store'], s.attributes['keygate.store.result']])).toEqual([
      ['keygate.store.lookup', 'MemoryKeyStore', 'found'],
      ['keygate.store.lookup', 'MemoryKeyStore', 'not_found'],
    ]);
  });

  it('tells a store that timed out from one that failed', async () => {
    const hung = new CachedKeyStore(hangingStore, { telemetry: sdk.options, timeoutMs: 20 });
    const failing = new CachedKeyStore(failingStore, { telemetry: sdk.options });
    await authenticate(request(generateKey()), hung);
    await authenticate(request(generateKey()), failing);
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'timeout' })).toBe(1);
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'error' })).toBe(1);
    const spans = sdk.spans();
    expect(spans.map((s) => [s.attributes['keygate.store.result'], s.status.code])).toEqual([
      ['timeout', 2],
      ['error', 2],
    ]);
    expect(spans.every((s) => s.status.code === 2)).toBe(true);
  });

  it('puts neither the digest nor the key into any span attribute', async () => {
    const { store, open } = await seededStore();
    await authenticate(request(open.secret), new CachedKeyStore(store, { telemetry: sdk.options }));
    const spans = sdk.spans();
    // The text scanned below holds the attributes of the one lookup span (none would pass vacuously).
    expect(spans.map((s) => [s.name, s.attributes['keygate.store.result']])).toEqual([
      ['keygate.store.lookup', 'found'],
    ]);
    const text = JSON.stringify(spans.map((s) => s.attributes));
    expect(text).toContain('keygate.store.result');
    expect(text).not.toContain(open.secret);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('a store with telemetry (no cache in front)', () => {
  it('reports its lookups by result on PGlite', async () => {
    const db = new PGlite();
    const store = new PostgresKeyStore({ client: db, telemetry: sdk.options });
    await store.migrate();
    const { keys: _keys, ...seed } = await seededStore();
    const memoryRecord = await seed.store.findById(seed.open.key.id);
    if (memoryRecord) await store.insert(memoryRecord);
    await authenticate(request(seed.open.secret), store);
    await authenticate(request(generateKey()), store);
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'found' })).toBe(1);
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'not_found' })).toBe(1);
    expect(sdk.spans().map((s) => s.attributes['keygate.store'])).toEqual(['postgres', 'postgres']);
    store.close();
    await db.close();
  });
});

describe('UsageRecorder with telemetry', () => {
  it('reports how old the oldest count of a flush was, and counts failed flushes', async () => {
    let now = Date.parse('2026-11-23T12:00:00Z');
    const { store, open } = await seededStore();
    let failNext = false;
    const usage = {
      addUsage: (batch: Parameters<MemoryKeyStore['addUsage']>[0]) => {
        if (failNext) return Promise.reject(new Error('down'));
        return store.addUsage(batch);
      },
      getUsage: store.getUsage.bind(store),
      getActivity: store.getActivity.bind(store),
    };
    const usageStore = { [CAPABILITIES]: { usage } };
    const recorder = new UsageRecorder({ store: usageStore, intervalMs: 0, clock: () => now, telemetry: sdk.options });
    await authenticate(request(open.secret), store, { onResult: recorder.record });
    now += 4_000;
    await authenticate(request(open.secret), store, { onResult: recorder.record });
    now += 1_500;
    failNext = true;
    await expect(recorder.flush()).rejects.toThrow();
    now += 500;
    failNext = false;
    await recorder.flush();
    expect(await sdk.total(METRICS.flushFailures)).toBe(1);
    const lag = (await sdk.metrics()).get(METRICS.flushLag);
    expect(lag?.unit).toBe('s');
    expect(lag?.points[0]?.value).toBe(6); // the first count waited 4 + 1.5 + 0.5 s
  });
});

describe('rate limits with telemetry', () => {
  it('counts each decision of a limited key, refused ones apart', async () => {
    const { store, open } = await seededStore();
    const { MemoryRateLimiter } = await import('keygate');
    const options = {
      telemetry: sdk.options,
      rateLimit: { limiter: new MemoryRateLimiter(), default: { limit: 2, windowMs: 60_000 } },
    };
    for (let i = 0; i < 3; i++) await authenticate(request(open.secret), store, options);
    expect(await sdk.total(METRICS.rateLimit, { 'keygate.ratelimit.allowed': true })).toBe(2);
    expect(
      await sdk.total(METRICS.rateLimit, { 'keygate.ratelimit.allowed': false, 'keygate.ratelimit.degraded': false }),
    ).toBe(1);
  });
});
