// Internal (authenticate's `rateLimit` option builds one per shared limiter): imported from the source.
import {
  capabilityOf,
  type KeygateEvent,
  type RateLimitDecision,
  type RateLimiter,
  RateLimiterUnavailableError,
} from 'keygate';
import { describe, expect, it } from 'vitest';
import { FallbackRateLimiter } from '../../src/rate-limit/fallback.js';
import { rejection } from './support/rejection.js';

/** A shared limiter the test switches between answering and failing, counting its calls. */
class Switchable implements RateLimiter {
  failing = false;
  calls = 0;
  private pending: ((decision: RateLimitDecision) => void)[] = [];
  hold = false;
  async consume(_keyId: string, limit: { limit: number }): Promise<RateLimitDecision> {
    this.calls++;
    if (this.hold) return new Promise((resolve) => this.pending.push(resolve));
    if (this.failing) throw new RateLimiterUnavailableError('down', new Error('ECONNREFUSED'));
    return { allowed: true, limit: limit.limit, remaining: 4242, resetMs: 1 };
  }
  release(): void {
    for (const resolve of this.pending.splice(0)) resolve({ allowed: true, limit: 1, remaining: 4242, resetMs: 1 });
  }
}

function setup(options: { onLimiterError?: 'fallback' | 'deny'; probeIntervalMs?: number } = {}) {
  let now = 1_000_000;
  const shared = new Switchable();
  const events: KeygateEvent[] = [];
  const limiter = new FallbackRateLimiter({
    limiter: shared,
    onEvent: (e) => void events.push(e),
    clock: () => now,
    ...options,
  });
  return {
    shared,
    events,
    limiter,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const policy = { limit: 3, windowMs: 60_000 };

describe('FallbackRateLimiter', () => {
  it('passes the shared limiter’s decisions through while it answers, with no event', async () => {
    const { limiter, events } = setup();
    expect(await limiter.consume('k', policy, 1)).toMatchObject({ allowed: true, remaining: 4242 });
    expect(events).toEqual([]);
    expect(limiter.degraded).toBe(false);
  });

  it('limits per process with the key’s own limit while the shared limiter fails, and emits one event per episode', async () => {
    const { limiter, shared, events } = setup();
    shared.failing = true;
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('k', policy, 1)));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.every((d) => d.limit === 3)).toBe(true);
    expect(await limiter.consume('other', policy, 1)).toMatchObject({ allowed: true, remaining: 2 });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ratelimit.degraded', limiter: 'Switchable', keyId: null });
    expect(capabilityOf(limiter, 'degradable')?.degraded).toBe(true);
  });

  it('asks the shared limiter only once per probe interval while degraded, and ends the episode on its first answer', async () => {
    const { limiter, shared, events, advance } = setup({ probeIntervalMs: 1000 });
    shared.failing = true;
    await limiter.consume('k', policy, 1);
    const callsAtFailure = shared.calls;
    for (let i = 0; i < 20; i++) await limiter.consume('k', policy, 0);
    expect(shared.calls).toBe(callsAtFailure);
    shared.failing = false;
    advance(1000);
    expect(await limiter.consume('k', policy, 1)).toMatchObject({ remaining: 4242 });
    expect(limiter.degraded).toBe(false);
    // A new failure is a new episode, with a new event.
    shared.failing = true;
    await limiter.consume('k', policy, 1);
    expect(events.map((e) => e.type)).toEqual(['ratelimit.degraded', 'ratelimit.degraded']);
  });

  it('does not end an episode on the late answer of a request sent before it began', async () => {
    const { limiter, shared } = setup({ probeIntervalMs: 60_000 });
    shared.hold = true;
    const early = limiter.consume('k', policy, 1);
    shared.hold = false;
    shared.failing = true;
    await limiter.consume('k', policy, 1);
    expect(limiter.degraded).toBe(true);
    shared.release();
    await early;
    expect(limiter.degraded).toBe(true);
  });

  it("under onLimiterError 'deny' rejects with rate_limiter_unavailable (cause kept) and still emits once", async () => {
    const { limiter, shared, events } = setup({ onLimiterError: 'deny' });
    shared.failing = true;
    const first = await rejection(limiter.consume('k', policy, 1));
    expect(first).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect((first.cause as Error).message).toBe('ECONNREFUSED');
    expect(await rejection(limiter.consume('k', policy, 1))).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect(events).toHaveLength(1);
  });

  it('wraps any failure of a custom limiter, even a plain Error, as rate_limiter_unavailable under deny', async () => {
    const custom: RateLimiter = {
      consume: async () => {
        throw new Error('boom');
      },
    };
    const limiter = new FallbackRateLimiter({ limiter: custom, onLimiterError: 'deny' });
    const err = await rejection(limiter.consume('k', policy, 1));
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    expect((err.cause as Error).message).toBe('boom');
  });

  it('rejects bad arguments with invalid_input, without counting them as an outage', async () => {
    const { limiter, events } = setup();
    expect(await rejection(limiter.consume('k', policy, -1))).toMatchObject({ code: 'invalid_input', field: 'cost' });
    expect(events).toEqual([]);
    expect(limiter.degraded).toBe(false);
  });

  it('never lets a failing event hook affect the answer', async () => {
    const shared = new Switchable();
    shared.failing = true;
    const limiter = new FallbackRateLimiter({
      limiter: shared,
      onEvent: () => {
        throw new Error('hook failed');
      },
    });
    expect(await limiter.consume('k', policy, 1)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it.each([
    ['limiter', { limiter: {} }],
    ['onLimiterError', { limiter: new Switchable(), onLimiterError: 'allow' }],
    ['probeIntervalMs', { limiter: new Switchable(), probeIntervalMs: -1 }],
    ['timeoutMs', { limiter: new Switchable(), timeoutMs: -1 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    expect(() => new FallbackRateLimiter(options as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
