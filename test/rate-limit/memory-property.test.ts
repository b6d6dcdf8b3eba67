// The memory limiter against a reference model that keeps nothing but a log of timestamps: for
// random sequences of (key, time advance, cost), its decisions equal the model's, and no window
// that starts at a key's first request ever holds more than `limit` units.
import fc from 'fast-check';
import { MemoryRateLimiter } from 'keygate';
import { describe, expect, it } from 'vitest';

interface Entry {
  readonly t: number;
  readonly cost: number;
  readonly allowed: boolean;
  /** This request opened a window (the key had none open). */
  readonly opens: boolean;
}

/** The contract, read literally off a log: the window is the one opened by the latest request that opened one. */
function reference(log: readonly Entry[], t: number, cost: number, limit: number, windowMs: number) {
  let start = -1;
  for (let i = log.length - 1; i >= 0; i--) {
    if ((log[i] as Entry).opens) {
      start = i;
      break;
    }
  }
  const opener = log[start];
  const opens = opener === undefined || t >= opener.t + windowMs;
  const used = opens ? 0 : log.slice(start).reduce((n, e) => n + (e.allowed ? e.cost : 0), 0);
  const allowed = used + cost <= limit;
  return {
    opens,
    decision: {
      allowed,
      limit,
      remaining: limit - used - (allowed ? cost : 0),
      resetMs: opens ? windowMs : (opener as Entry).t + windowMs - t,
    },
  };
}

/** Units the log allowed in [from, from + windowMs). */
function unitsWithin(log: readonly Entry[], from: number, windowMs: number): number {
  return log.filter((e) => e.allowed && e.t >= from && e.t < from + windowMs).reduce((n, e) => n + e.cost, 0);
}

const step = fc.record({
  key: fc.integer({ min: 0, max: 3 }),
  advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 2500 })),
  cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 12 })),
});

describe('MemoryRateLimiter against a reference log of timestamps', () => {
  it('decides as the model does, and no window from a first request holds more than limit units', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(step, { maxLength: 200 }),
        (limit, windowMs, steps) => {
          let now = 0;
          const limiter = new MemoryRateLimiter({ clock: () => now });
          const logs = new Map<number, Entry[]>();
          for (const { key, advance, cost } of steps) {
            now += advance;
            const log = logs.get(key) ?? [];
            logs.set(key, log);
            const expected = reference(log, now, cost, limit, windowMs);
            const actual = limiter.consumeSync(`key_${key}`, { limit, windowMs }, cost);
            expect(actual).toEqual(expected.decision);
            log.push({ t: now, cost, allowed: actual.allowed, opens: expected.opens });
          }
          for (const log of logs.values()) {
            for (const e of log) {
              if (e.opens) expect(unitsWithin(log, e.t, windowMs)).toBeLessThanOrEqual(limit);
              // Any span of windowMs, wherever it starts: at most two windows' worth (the boundary case).
              expect(unitsWithin(log, e.t, windowMs)).toBeLessThanOrEqual(2 * limit);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never holds more than max keys, whatever the sequence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 200 }), (max, steps) => {
        let now = 0;
        const limiter = new MemoryRateLimiter({ max, clock: () => now });
        for (const { key, advance, cost } of steps) {
          now += advance;
          limiter.consumeSync(`key_${key}`, { limit: 5, windowMs: 100 }, cost);
          expect(limiter.size).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('drops exactly the least recently used key when full and every window is open (a reference LRU)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(step, { maxLength: 200 }), (max, steps) => {
        const limiter = new MemoryRateLimiter({ max, clock: () => 0 });
        // Model: keys in order of use (least recent first) and the units each used in its one window.
        const order: number[] = [];
        const used = new Map<number, number>();
        for (const { key, cost } of steps) {
          if (!used.has(key) && order.length >= max) used.delete(order.shift() as number);
          const i = order.indexOf(key);
          if (i >= 0) order.splice(i, 1);
          order.push(key);
          const before = used.get(key) ?? 0;
          const allowed = before + cost <= 5;
          used.set(key, allowed ? before + cost : before);
          const actual = limiter.consumeSync(`key_${key}`, { limit: 5, windowMs: 1e9 }, cost);
          expect(actual).toMatchObject({ allowed, remaining: 5 - (used.get(key) as number) });
        }
      }),
      { numRuns: 300 },
    );
  });
});
