import { InvalidInputError } from 'keygate';
import { createTelemetry, METRICS } from 'keygate/store-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTelemetry } from './support.js';

const live = { id: 'key_1', hint: 'mk_live_…abcd', mode: 'live' };

describe('createTelemetry', () => {
  let sdk = memoryTelemetry();
  afterEach(async () => {
    await sdk.shutdown();
    sdk = memoryTelemetry();
  });

  it('returns undefined when neither a meter nor a tracer is given, so nothing is recorded', () => {
    expect(createTelemetry(undefined)).toBeUndefined();
    expect(createTelemetry({})).toBeUndefined();
  });

  it.each([
    ['a string', 'otel', 'telemetry'],
    ['a meter without createCounter', { meter: {} }, 'telemetry.meter'],
    ['a tracer without startSpan', { tracer: {} }, 'telemetry.tracer'],
  ])('refuses %s, naming the field', (_, options, field) => {
    const attempt = () => createTelemetry(options as never);
    expect(attempt).toThrow(InvalidInputError);
    try {
      attempt();
    } catch (err) {
      expect((err as InvalidInputError).field).toBe(field);
    }
  });

  it('counts requests by outcome, code and mode, and records the duration in seconds', async () => {
    const t = createTelemetry(sdk.options);
    t?.auth({ ok: true, key: live }, 0.002);
    t?.auth({ ok: false, code: 'invalid_api_key' }, 0.004);
    t?.auth({ ok: false, code: 'invalid_api_key' }, 0.001);
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.outcome': 'allowed', 'keygate.key.mode': 'live' })).toBe(
      1,
    );
    expect(
      await sdk.total(METRICS.requests, { 'keygate.auth.code': 'invalid_api_key', 'keygate.key.mode': 'none' }),
    ).toBe(2);
    const duration = (await sdk.metrics()).get(METRICS.duration);
    expect(duration?.unit).toBe('s');
    expect(duration?.points.reduce((n, p) => n + (p.count ?? 0), 0)).toBe(3);
  });

  it('puts no key id, hint or address into attributes unless each is opted in', async () => {
    createTelemetry(sdk.options)?.auth({ ok: true, key: live }, 0.001, '203.0.113.7');
    const plain = (await sdk.metrics()).get(METRICS.requests)?.points[0]?.attributes ?? {};
    expect(Object.keys(plain).sort()).toEqual(['keygate.auth.code', 'keygate.auth.outcome', 'keygate.key.mode']);

    const opted = memoryTelemetry({ keyId: true, hint: true, address: true });
    createTelemetry(opted.options)?.auth({ ok: true, key: live }, 0.001, '203.0.113.7');
    const attrs = (await opted.metrics()).get(METRICS.requests)?.points[0]?.attributes;
    expect(attrs).toMatchObject({
      'keygate.key.id': 'key_1',
      'keygate.key.hint': 'mk_live_…abcd',
      'client.address': '203.0.113.7',
    });
    await opted.shutdown();
  });

  it('wraps a store lookup in a span carrying its result, with an error status on failure', async () => {
    const t = createTelemetry(sdk.options);
    t?.lookup('postgres')('found');
    t?.lookup('postgres')('error');
    const spans = sdk.spans();
    expect(spans.map((s) => s.name)).toEqual(['keygate.store.lookup', 'keygate.store.lookup']);
    expect(spans.map((s) => s.attributes['keygate.store.result'])).toEqual(['found', 'error']);
    expect(spans[1]?.status.code).toBe(2);
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'error' })).toBe(1);
  });

  it('counts cache answers, rate-limit decisions, flush lag and flush failures', async () => {
    const t = createTelemetry(sdk.options);
    t?.cache('hit');
    t?.cache('hit');
    t?.cache('miss');
    t?.rateLimit(false, true);
    t?.flush(1.5, false);
    t?.flush(0, true);
    expect(await sdk.total(METRICS.cache, { 'keygate.cache.result': 'hit' })).toBe(2);
    expect(
      await sdk.total(METRICS.rateLimit, { 'keygate.ratelimit.allowed': false, 'keygate.ratelimit.degraded': true }),
    ).toBe(1);
    expect((await sdk.metrics()).get(METRICS.flushLag)?.points[0]?.value).toBe(1.5);
    expect(await sdk.total(METRICS.flushFailures)).toBe(1);
  });

  it('never lets a throwing SDK fail the caller', () => {
    const thrown = { add: 0, record: 0 };
    const broken = {
      meter: {
        createCounter: () => ({
          add: () => {
            thrown.add++;
            throw new Error('sdk');
          },
        }),
        createHistogram: () => ({
          record: () => {
            thrown.record++;
            throw new Error('sdk');
          },
        }),
      },
    };
    const t = createTelemetry(broken as never);
    expect(t).toBeDefined();
    expect(() => t?.auth({ ok: true, key: live }, 0.001)).not.toThrow();
    expect(() => t?.cache('miss')).not.toThrow();
    // The SDK was really called, and really threw: the calls above did reach it.
    expect(thrown.add).toBeGreaterThanOrEqual(2);
  });

  it('records metrics with a meter and no tracer, and starts no span', async () => {
    const t = createTelemetry({ meter: sdk.options.meter });
    expect(t).toBeDefined();
    t?.auth({ ok: true, key: live }, 0.002);
    t?.lookup('postgres')('found');
    t?.cache('hit');
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.outcome': 'allowed', 'keygate.key.mode': 'live' })).toBe(
      1,
    );
    expect(await sdk.total(METRICS.storeLookups, { 'keygate.store.result': 'found' })).toBe(1);
    expect(await sdk.total(METRICS.cache, { 'keygate.cache.result': 'hit' })).toBe(1);
    expect(sdk.spans()).toEqual([]);
  });
});
