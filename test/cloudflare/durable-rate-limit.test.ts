import { authenticate, capabilityOf, KeyManager, MemoryKeyStore, RateLimiterUnavailableError } from 'keygate';
import { describeRateLimiterContract } from 'keygate/testing';
import type { Miniflare } from 'miniflare';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DurableObjectRateLimiter } from '../../backends/cloudflare/durable-objects/index.js';
import { freshKey } from '../rate-limit/support/fresh-key.js';
import { rejection } from '../rate-limit/support/rejection.js';
import { limiterOn, namespaceOf, startObjects } from './support/objects.js';

let mf: Miniflare;
beforeAll(async () => {
  mf = await startObjects();
});
afterAll(() => mf?.dispose());

// Real time: workerd's clock is the objects' clock, so a window's end is found by polling.
describeRateLimiterContract(
  'DurableObjectRateLimiter on workerd (SQLite-backed objects)',
  async () => ({
    limiter: await limiterOn(mf),
  }),
  { describe, it, expect, beforeEach, afterEach },
);

describe('DurableObjectRateLimiter', () => {
  it('counts exactly through two clients of one namespace, interleaved: one object per key', async () => {
    const [a, b] = [await limiterOn(mf), await limiterOn(mf)];
    const key = freshKey('two');
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).consume(key, { limit: 25, windowMs: 60_000 }, 1)),
    );
    const allowed = decisions.filter((d) => d.allowed).map((d) => d.remaining);
    expect(allowed.sort((x, y) => x - y)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('declares its timeoutMs (1000 by default) as its deadline', async () => {
    const limiter = new DurableObjectRateLimiter({ namespace: await namespaceOf(mf, 'KEYGATE_LIMITS') });
    expect(limiter.timeoutMs).toBe(1_000);
    expect(capabilityOf(limiter, 'deadline')?.timeoutMs).toBe(1_000);
  });

  it('refuses a namespace that is not a binding as invalid_input naming namespace', () => {
    expect(() => new DurableObjectRateLimiter({ namespace: {} as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'namespace' }),
    );
  });

  it('rejects with rate_limiter_unavailable when its object does not answer within timeoutMs', async () => {
    const limiter = new DurableObjectRateLimiter({ namespace: await namespaceOf(mf, 'STUCK'), timeoutMs: 200 });
    const err = await rejection(limiter.consume(freshKey('stuck'), { limit: 1, windowMs: 1000 }, 1));
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
  });

  it('fails when the object class is not SQLite-backed: 503 through authenticate with onLimiterError deny', async () => {
    const plain = await startObjects({ useSQLite: false });
    try {
      const limiter = await limiterOn(plain);
      const err = await rejection(limiter.consume(freshKey('kv'), { limit: 1, windowMs: 1000 }, 1));
      expect(err).toBeInstanceOf(RateLimiterUnavailableError);
      expect(String((err.cause as Error).message)).toMatch(/new_sqlite_classes/);
      const store = new MemoryKeyStore();
      const { secret } = await new KeyManager({ store }).create({ accountId: 'acct_1', name: 'k', mode: 'live' });
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, {
        rateLimit: { limiter, default: { limit: 5, windowMs: 60_000 }, onLimiterError: 'deny' },
      });
      expect(result).toMatchObject({ ok: false, status: 503, code: 'rate_limiter_unavailable' });
    } finally {
      await plain.dispose();
    }
  });
});
