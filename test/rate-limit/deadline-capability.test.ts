// A shared limiter that declares a `deadline` no later than authenticate's `timeoutMs` is trusted to
// give up by itself: no second timer guards it. A limiter that declares none is guarded by
// authenticate's `timeoutMs`, whatever properties it has. keygate's own shared limiters declare theirs.
import {
  type AuthRequest,
  authenticate,
  CachedKeyStore,
  capabilityOf,
  KeyManager,
  MemoryKeyStore,
  type RateLimitDecision,
  type RateLimiter,
  RateLimiterUnavailableError,
} from 'keygate';
import { PostgresRateLimiter } from 'keygate/postgres';
import { RedisRateLimiter } from 'keygate/redis';
import { CAPABILITIES } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { settlesAt } from './support/deadline.js';

/** A limiter that gives up after `answersAfterMs` with RateLimiterUnavailableError. */
function slowLimiter(answersAfterMs: number, extra: object = {}): RateLimiter {
  return {
    ...extra,
    consume: () =>
      new Promise<RateLimitDecision>((_, reject) =>
        setTimeout(() => reject(new RateLimiterUnavailableError('gave up', new Error('slow'))), answersAfterMs),
      ),
  };
}

async function seed(): Promise<{ cached: CachedKeyStore; request: AuthRequest }> {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const { secret } = await keys.create({
    accountId: 'a',
    name: 'k',
    mode: 'live',
    rateLimit: { limit: 5, windowMs: 60_000 },
  });
  const cached = new CachedKeyStore(store);
  const request = { headers: { 'x-api-key': secret } };
  await authenticate(request, cached); // warm the cache: no store timer in what is measured
  return { cached, request };
}

describe('a limiter’s deadline capability', async () => {
  const { cached, request } = await seed();
  const deny = (limiter: RateLimiter) => ({ timeoutMs: 150, rateLimit: { limiter, onLimiterError: 'deny' as const } });

  it('a limiter that declares a deadline within authenticate’s is not guarded: its own answer decides', async () => {
    const limiter = slowLimiter(200, { [CAPABILITIES]: { deadline: { timeoutMs: 100 } } });
    const outcome = await settlesAt(200, () => authenticate(request, cached, deny(limiter)));
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { status: 503, code: 'rate_limiter_unavailable' } });
  });

  it('a limiter with timeout properties but no deadline capability is guarded by authenticate’s timeoutMs', async () => {
    const limiter = slowLimiter(200, { timeout: 100, timeoutMs: 100 });
    const outcome = await settlesAt(150, () => authenticate(request, cached, deny(limiter)));
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { status: 503, code: 'rate_limiter_unavailable' } });
  });

  it('a limiter whose deadline is later than authenticate’s is guarded by authenticate’s timeoutMs', async () => {
    const limiter = slowLimiter(200, { [CAPABILITIES]: { deadline: { timeoutMs: 1000 } } });
    const outcome = await settlesAt(150, () => authenticate(request, cached, deny(limiter)));
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { status: 503, code: 'rate_limiter_unavailable' } });
  });

  it('RedisRateLimiter and PostgresRateLimiter declare their timeoutMs as their deadline', () => {
    const redis = new RedisRateLimiter({ client: { sendCommand: async () => null } as never, timeoutMs: 120 });
    const postgres = new PostgresRateLimiter({
      client: { query: async () => ({ rows: [] }), transaction: async () => {}, listen: async () => () => {} } as never,
      timeoutMs: 130,
    });
    expect(capabilityOf(redis, 'deadline')?.timeoutMs).toBe(120);
    expect(capabilityOf(postgres, 'deadline')?.timeoutMs).toBe(130);
  });
});
