// The request path records with attribute objects built once: the same frozen object for the same
// values, what an SDK receives unchanged otherwise; and observedLookup tells a wrapper's own timeout apart.
import type { Meter } from '@opentelemetry/api';
import { createTelemetry, observedLookup } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

// A Meter whose instruments remember every attributes object they were given, by metric name.
function recordingMeter() {
  const seen = new Map<string, unknown[]>();
  const instrument = (name: string) => {
    const record = (_: number, attributes?: unknown) => {
      const list = seen.get(name) ?? [];
      list.push(attributes);
      seen.set(name, list);
    };
    return { add: record, record };
  };
  const meter = { createCounter: instrument, createHistogram: instrument } as unknown as Meter;
  return { meter, seen: (name: string) => seen.get(name) ?? [] };
}

const key = { id: 'key_1', hint: 'kg_live_…abcd', mode: 'live' };

describe('telemetry attributes', () => {
  it('reuses one frozen object per value for durations, cache, rate-limit and store results; requests carry their code and mode', () => {
    const { meter, seen } = recordingMeter();
    const t = createTelemetry({ meter });
    for (let i = 0; i < 2; i++) {
      t?.auth({ ok: true, key }, 0.001, '203.0.113.7');
      t?.auth({ ok: false, code: 'revoked_api_key', key }, 0.001);
      t?.cache('hit');
      t?.rateLimit(true, false);
      t?.lookup('memory')('found');
    }
    for (const name of [
      'keygate.auth.duration',
      'keygate.cache.lookups',
      'keygate.ratelimit.decisions',
      'keygate.store.lookups',
      'keygate.store.lookup.duration',
    ]) {
      const list = seen(name);
      const half = list.length / 2;
      for (let i = 0; i < half; i++) {
        expect(list[i], name).toBe(list[i + half]);
        expect(Object.isFrozen(list[i]), name).toBe(true);
      }
    }
    expect(seen('keygate.auth.requests')).toEqual([
      { 'keygate.auth.outcome': 'allowed', 'keygate.auth.code': 'ok', 'keygate.key.mode': 'live' },
      { 'keygate.auth.outcome': 'denied', 'keygate.auth.code': 'revoked_api_key', 'keygate.key.mode': 'live' },
      { 'keygate.auth.outcome': 'allowed', 'keygate.auth.code': 'ok', 'keygate.key.mode': 'live' },
      { 'keygate.auth.outcome': 'denied', 'keygate.auth.code': 'revoked_api_key', 'keygate.key.mode': 'live' },
    ]);
    expect(seen('keygate.auth.duration')[1]).toEqual({ 'keygate.auth.outcome': 'denied' });
    expect(seen('keygate.ratelimit.decisions')[0]).toEqual({
      'keygate.ratelimit.allowed': true,
      'keygate.ratelimit.degraded': false,
    });
  });

  it('records every combination of rate-limit decision with its own values', () => {
    const { meter, seen } = recordingMeter();
    const t = createTelemetry({ meter });
    for (const allowed of [false, true]) for (const degraded of [false, true]) t?.rateLimit(allowed, degraded);
    expect(seen('keygate.ratelimit.decisions')).toEqual([
      { 'keygate.ratelimit.allowed': false, 'keygate.ratelimit.degraded': false },
      { 'keygate.ratelimit.allowed': false, 'keygate.ratelimit.degraded': true },
      { 'keygate.ratelimit.allowed': true, 'keygate.ratelimit.degraded': false },
      { 'keygate.ratelimit.allowed': true, 'keygate.ratelimit.degraded': true },
    ]);
  });

  it('builds per-request attributes when an opt-in attribute applies', () => {
    const { meter, seen } = recordingMeter();
    const t = createTelemetry({ meter, attributes: { keyId: true, address: true } });
    t?.auth({ ok: true, key }, 0.001, '203.0.113.7');
    t?.auth({ ok: false, code: 'missing_api_key' }, 0.001, null);
    expect(seen('keygate.auth.requests')).toEqual([
      {
        'keygate.auth.outcome': 'allowed',
        'keygate.auth.code': 'ok',
        'keygate.key.mode': 'live',
        'keygate.key.id': 'key_1',
        'client.address': '203.0.113.7',
      },
      { 'keygate.auth.outcome': 'denied', 'keygate.auth.code': 'missing_api_key', 'keygate.key.mode': 'none' },
    ]);
  });
});

describe('observedLookup', () => {
  const DEADLINE = new Error('deadline');

  it.each([
    ['the wrapper’s own timeout', DEADLINE, 'timeout'],
    ['any other failure', new Error('down'), 'error'],
  ])('reports %s as %s and rethrows it', async (_, error, result) => {
    const { meter, seen } = recordingMeter();
    const t = createTelemetry({ meter });
    await expect(
      observedLookup(
        t,
        'memory',
        () => Promise.reject(error),
        (err) => err === DEADLINE,
      ),
    ).rejects.toBe(error);
    expect(seen('keygate.store.lookups')).toEqual([{ 'keygate.store.result': result }]);
  });

  it('reports an error when the predicate itself throws, and still rethrows the lookup’s error', async () => {
    const { meter, seen } = recordingMeter();
    const t = createTelemetry({ meter });
    const down = new Error('down');
    const predicate = () => {
      throw new Error('predicate');
    };
    await expect(observedLookup(t, 'memory', () => Promise.reject(down), predicate)).rejects.toBe(down);
    expect(seen('keygate.store.lookups')).toEqual([{ 'keygate.store.result': 'error' }]);
  });
});
