import { MemoryRateLimiter } from 'keygate';
import { describeRateLimiterContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

function manual(start = 1_000_000) {
  let now = start;
  return {
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describeRateLimiterContract(
  'MemoryRateLimiter',
  async () => {
    const time = manual();
    return { limiter: new MemoryRateLimiter({ clock: time.clock }), advance: time.advance };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('MemoryRateLimiter', () => {
  it('anchors the window at the first request: refused until windowMs after it, then a fresh window', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ clock: time.clock });
    const policy = { limit: 2, windowMs: 1000 };
    expect(limiter.consumeSync('k', policy, 1)).toMatchObject({ allowed: true, resetMs: 1000 });
    time.advance(600);
    expect(limiter.consumeSync('k', policy, 1)).toMatchObject({ allowed: true, remaining: 0, resetMs: 400 });
    time.advance(399);
    expect(limiter.consumeSync('k', policy, 1)).toMatchObject({ allowed: false, resetMs: 1 });
    time.advance(1);
    expect(limiter.consumeSync('k', policy, 1)).toMatchObject({ allowed: true, remaining: 1, resetMs: 1000 });
  });

  it('allows up to twice the limit in a span of windowMs that straddles two windows (documented)', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ clock: time.clock });
    const policy = { limit: 5, windowMs: 1000 };
    limiter.consumeSync('k', policy, 1); // opens the window at t=0
    time.advance(990);
    expect(limiter.consumeSync('k', policy, 4).allowed).toBe(true); // t=990: the first window's last units
    time.advance(10);
    expect(limiter.consumeSync('k', policy, 5).allowed).toBe(true); // t=1000: a fresh window
    // 9 units within the 20 ms from t=990 to t=1000: within 2 * limit, as documented.
  });

  it('keeps a window length from its opening: a new windowMs applies from the next window', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ clock: time.clock });
    limiter.consumeSync('k', { limit: 1, windowMs: 1000 }, 1);
    time.advance(500);
    expect(limiter.consumeSync('k', { limit: 1, windowMs: 10_000 }, 1)).toMatchObject({
      allowed: false,
      resetMs: 500,
    });
    time.advance(500);
    expect(limiter.consumeSync('k', { limit: 1, windowMs: 10_000 }, 1)).toMatchObject({
      allowed: true,
      resetMs: 10_000,
    });
  });

  it('rounds a fractional windowMs up to a whole millisecond', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ clock: time.clock });
    expect(limiter.consumeSync('k', { limit: 1, windowMs: 0.2 }, 1)).toMatchObject({ allowed: true, resetMs: 1 });
  });

  it('never holds more than max keys under a flood of 100,000 distinct keys', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ max: 1000, clock: time.clock });
    let largest = 0;
    for (let i = 0; i < 100_000; i++) {
      limiter.consumeSync(`key_${i}`, { limit: 5, windowMs: 60_000 }, 1);
      if (i % 10 === 0) time.advance(1);
      largest = Math.max(largest, limiter.size);
    }
    expect(largest).toBe(1000);
  });

  it('makes room by dropping an ended window before a live one, even a less recently used live one', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ max: 2, clock: time.clock });
    limiter.consumeSync('long', { limit: 1, windowMs: 60_000 }, 1); // least recently used, still open
    time.advance(1);
    limiter.consumeSync('short', { limit: 1, windowMs: 100 }, 1);
    time.advance(200); // 'short' has ended
    limiter.consumeSync('newcomer', { limit: 1, windowMs: 60_000 }, 1);
    expect(limiter.size).toBe(2);
    // 'long' kept its count: its window is still used up.
    expect(limiter.consumeSync('long', { limit: 1, windowMs: 60_000 }, 1).allowed).toBe(false);
  });

  it('drops the least recently used key when every window is open; that key then starts afresh (documented)', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ max: 2, clock: time.clock });
    const policy = { limit: 1, windowMs: 60_000 };
    limiter.consumeSync('a', policy, 1);
    limiter.consumeSync('b', policy, 1);
    limiter.consumeSync('a', policy, 1); // refused, and 'a' is now the most recent
    limiter.consumeSync('c', policy, 1); // room is made by dropping 'b'
    expect(limiter.consumeSync('a', policy, 1).allowed).toBe(false);
    expect(limiter.consumeSync('b', policy, 1).allowed).toBe(true);
  });

  it('stays exact for keys whose windows keep reopening (the heap of window ends is rebuilt)', () => {
    const time = manual();
    const limiter = new MemoryRateLimiter({ max: 3, clock: time.clock });
    const policy = { limit: 2, windowMs: 10 };
    for (let round = 0; round < 1000; round++) {
      for (const key of ['a', 'b', 'c']) {
        expect(limiter.consumeSync(key, policy, 2).allowed).toBe(true);
        expect(limiter.consumeSync(key, policy, 1).allowed).toBe(false);
      }
      time.advance(10);
    }
    expect(limiter.size).toBe(3);
  });

  it('forgets every window on clear()', () => {
    const limiter = new MemoryRateLimiter();
    limiter.consumeSync('k', { limit: 1, windowMs: 60_000 }, 1);
    limiter.clear();
    expect(limiter.size).toBe(0);
    expect(limiter.consumeSync('k', { limit: 1, windowMs: 60_000 }, 1).allowed).toBe(true);
  });

  it('throws invalid_input from consumeSync for a bad argument', () => {
    const limiter = new MemoryRateLimiter();
    expect(() => limiter.consumeSync('k', { limit: 1, windowMs: 1000 }, -1)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'cost' }),
    );
  });

  it.each([
    ['max', { max: 0 }],
    ['max', { max: 1.5 }],
    ['max', { max: '10' }],
    ['clock', { clock: 5 }],
  ])('refuses a bad %s option (%j) at construction', (field, options) => {
    expect(() => new MemoryRateLimiter(options as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
