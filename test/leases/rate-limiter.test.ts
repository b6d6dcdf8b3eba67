import {
  capabilityOf,
  InvalidInputError,
  LeasableMemoryRateLimiter,
  LeasedRateLimiter,
  MemoryRateLimiter,
  type RateLimit,
} from 'keygate';
import {
  CAPABILITIES,
  type Capabilities,
  grantOf,
  type LeasableRateLimiter,
  sameWindow,
  type TakeRequest,
} from 'keygate/store-kit';
import { describeRateLimiterContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectPendingUntil } from './support/pending.js';

function manual(start = 1_000_000) {
  let now = start;
  return {
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A memory limiter whose leases capability records every take's grant (round trips, to a shared limiter). */
function counted(inner: LeasableMemoryRateLimiter) {
  const grants: number[] = [];
  let givenBack = 0;
  const leases: LeasableRateLimiter = {
    take: async (keyId: string, limit: RateLimit, ask: TakeRequest) => {
      const lease = await inner.take(keyId, limit, ask);
      grants.push(lease.granted);
      return lease;
    },
    giveBack: async (keyId: string, limit: RateLimit, window: number, units: number) => {
      givenBack += units;
      await inner.giveBack(keyId, limit, window, units);
    },
  };
  const limiter = {
    consume: inner.consume.bind(inner),
    [CAPABILITIES]: { leases } satisfies Capabilities,
  };
  return { limiter, grants, givenBack: () => givenBack };
}

describeRateLimiterContract(
  'LeasableMemoryRateLimiter',
  async () => {
    const time = manual();
    return { limiter: new LeasableMemoryRateLimiter({ clock: time.clock }), advance: time.advance };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describeRateLimiterContract(
  'LeasedRateLimiter over LeasableMemoryRateLimiter',
  async () => {
    const time = manual();
    const inner = new LeasableMemoryRateLimiter({ clock: time.clock });
    return { limiter: new LeasedRateLimiter({ limiter: inner, clock: time.clock }), advance: time.advance };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('the slicing policy (grantOf)', () => {
  it.each([
    [100, { need: 1, want: 50, divisor: 8 }, 12],
    [1000, { need: 1, want: 50, divisor: 8 }, 50],
    [7, { need: 1, want: 50, divisor: 8 }, 1],
    [7, { need: 3, want: 50, divisor: 8 }, 3],
    [2, { need: 3, want: 50, divisor: 1 }, 0],
    [0, { need: 0, want: 50, divisor: 1 }, 0],
    [40, { need: 0, want: 50, divisor: 1 }, 40],
  ])('grants %i remaining with %o: %i', (remaining, ask, granted) => {
    expect(grantOf(remaining, ask)).toBe(granted);
  });
});

describe('LeasedRateLimiter', () => {
  const policy = { limit: 100_000, windowMs: 60_000 };

  it('refuses a limiter without the leases capability, naming limiter', () => {
    const limiter = new MemoryRateLimiter();
    expect(() => new LeasedRateLimiter({ limiter })).toThrow(InvalidInputError);
    expect(() => new LeasedRateLimiter({ limiter })).toThrow(expect.objectContaining({ field: 'limiter' }));
  });

  it('costs one take per half maxSlice requests for a key far from its limit (under 0.025 round trips a request)', async () => {
    const { limiter, grants } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100 });
    for (let i = 0; i < 1000; i++) expect((await leased.consume('far', policy, 1)).allowed).toBe(true);
    // The first take grants 100; each top-up, taken when half the slice is left, brings it back to 99.
    expect(grants[0]).toBe(100);
    expect(grants.slice(1).every((g) => g === 50)).toBe(true);
    // 1000 units cost 100 + 18 * 50, and the slice is topped up once more before it runs dry.
    expect(grants).toHaveLength(20);
    expect(grants.length / 1000).toBeLessThan(0.025);
  });

  it('holds slices of at most 300 units by default', () => {
    const leased = new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter() });
    expect([leased.maxSlice, leased.divisor]).toEqual([300, 8]);
  });

  it('tops up earlier after a top-up that saw more than a quarter of the slice spent while it was in flight', async () => {
    const inner = new LeasableMemoryRateLimiter();
    const sent: Array<() => void> = [];
    // A shared limiter that answers a take only when the test lets it: a slow store.
    const leases: LeasableRateLimiter = {
      take: (keyId, limit, ask) => new Promise((resolve) => sent.push(() => resolve(inner.take(keyId, limit, ask)))),
      giveBack: (keyId, limit, window, units) => inner.giveBack(keyId, limit, window, units),
    };
    const limiter = { consume: inner.consume.bind(inner), [CAPABILITIES]: { leases } satisfies Capabilities };
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100 });
    const land = async () => {
      sent.shift()?.();
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const first = leased.consume('slow', policy, 1);
    await land();
    await first;
    const spend = (n: number) => {
      for (let i = 0; i < n; i++) expect(leased.consumeNow('slow', policy, 1)).toMatchObject({ allowed: true });
    };
    // 99 held: half (49) left sends the top-up of 50.
    spend(50);
    expect([leased.held('slow'), sent.length]).toEqual([49, 1]);
    // 30 go while it is in flight: it lands on 19 + 50 = 69, and the next top-up leaves at 2 × 30 = 60 left
    // (not at half, 34), within three quarters (51) of the slice.
    spend(30);
    await land();
    expect(leased.held('slow')).toBe(69);
    spend(17);
    expect(sent).toHaveLength(0);
    spend(1);
    expect([leased.held('slow'), sent.length]).toEqual([51, 1]);
    // idle() waits for the top-up in flight: then held counts what the store counted for it.
    await expectPendingUntil(leased.idle(), land);
    expect(leased.held('slow')).toBe(99);
    await leased.close();
  });

  it('tops a slice up before it runs dry, so no request of a key far from its limit waits for the shared limiter', async () => {
    const { limiter } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100 });
    await leased.consume('far', policy, 1);
    for (let i = 0; i < 1000; i++) {
      expect(leased.consumeNow('far', policy, 1)).toMatchObject({ allowed: true });
      // What a top-up took lands before the next request comes (this shared limiter answers at once).
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(leased.held('far')).toBeLessThanOrEqual(99);
  });

  it('takes only when a slice runs dry with prefetch off, and refuses a prefetch that is not a boolean', async () => {
    const { limiter, grants } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100, prefetch: false });
    for (let i = 0; i < 1000; i++) expect((await leased.consume('dry', policy, 1)).allowed).toBe(true);
    expect(grants).toEqual(Array.from({ length: 10 }, () => 100));
    expect(() => new LeasedRateLimiter({ limiter, prefetch: 'yes' as never })).toThrow(
      expect.objectContaining({ field: 'prefetch' }),
    );
  });

  it('keeps the slices of the max most recently used keys, giving back the least recently used one’s units', async () => {
    const { limiter, givenBack } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 10, max: 2, prefetch: false });
    await leased.consume('a', policy, 1);
    await leased.consume('b', policy, 1);
    // a again, twice (the second time it is already the most recent), so b is now the least recent.
    await leased.consume('a', policy, 1);
    await leased.consume('a', policy, 1);
    await leased.consume('c', policy, 1);
    expect([leased.held('a'), leased.held('b'), leased.held('c')]).toEqual([7, 0, 9]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(givenBack()).toBe(9);
    // b comes back with a slice of its own, and a (now the least recent) makes room.
    await leased.consume('b', policy, 1);
    expect([leased.held('a'), leased.held('b'), leased.held('c')]).toEqual([0, 9, 9]);
  });

  it('never holds more than maxSlice - 1 units of a key, top-ups included', async () => {
    const { limiter } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 20 });
    for (let i = 0; i < 500; i++) {
      await leased.consume('held', policy, 1 + (i % 3));
      expect(leased.held('held')).toBeLessThanOrEqual(19);
    }
  });

  it('answers consumeNow only from a slice that covers the request, for the limit it was taken for', async () => {
    const { limiter } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 10 });
    expect(leased.consumeNow('now', policy, 1)).toBeUndefined();
    await leased.consume('now', policy, 1);
    expect(leased.consumeNow('now', policy, 1)).toMatchObject({ allowed: true, limit: 100_000 });
    expect(leased.consumeNow('now', policy, 50)).toBeUndefined();
    expect(leased.consumeNow('now', { limit: 500, windowMs: 60_000 }, 1)).toBeUndefined();
    expect(capabilityOf(leased, 'immediateLimits')).toBe(leased);
  });

  it('takes one slice for many concurrent requests of one key (one take in flight per key)', async () => {
    const { limiter, grants } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100 });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => leased.consume('burst', policy, 1)));
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(grants).toEqual([100]);
  });

  it('takes what a request costing more than maxSlice needs, and no more', async () => {
    const { limiter, grants } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 10 });
    const decision = await leased.consume('big', { limit: 1000, windowMs: 60_000 }, 50);
    expect(decision).toMatchObject({ allowed: true, remaining: 950 });
    expect(grants).toEqual([50]);
  });

  it('takes smaller slices as the window runs low, down to what one request needs', async () => {
    const { limiter, grants } = counted(new LeasableMemoryRateLimiter());
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 100, divisor: 4 });
    let allowed = 0;
    for (let i = 0; i < 1200; i++)
      if ((await leased.consume('low', { limit: 1000, windowMs: 60_000 }, 1)).allowed) allowed++;
    expect(allowed).toBe(1000);
    const given = grants.filter((g) => g > 0);
    expect(given.slice(0, 4)).toEqual([100, 50, 50, 50]);
    for (let i = 1; i < given.length; i++) expect(given[i]).toBeLessThanOrEqual(given[i - 1] as number);
    expect(given.at(-1)).toBe(1);
  });

  it('refuses early by at most (instances - 1) * (maxSlice - 1) units, and exactly that when the others hold full slices', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const maxSlice = 10;
    const [a, b, c] = [0, 1, 2].map(() => new LeasedRateLimiter({ limiter: shared, maxSlice, divisor: 1 }));
    const limit = { limit: 200, windowMs: 60_000 };
    // a and c each spend one unit of a full slice and keep the other maxSlice - 1.
    await a?.consume('bound', limit, 1);
    await c?.consume('bound', limit, 1);
    let allowed = 2;
    while ((await b?.consume('bound', limit, 1))?.allowed) allowed++;
    expect(allowed).toBe(200 - 2 * (maxSlice - 1));
    expect(a?.held('bound')).toBe(maxSlice - 1);
    // The units held elsewhere were never lost: a and c can still spend them.
    for (let i = 0; i < maxSlice - 1; i++) expect((await a?.consume('bound', limit, 1))?.allowed).toBe(true);
    expect((await a?.consume('bound', limit, 1))?.allowed).toBe(false);
  });

  it('gives unspent units back on close(), so the shared window counts only what was allowed', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const leased = new LeasedRateLimiter({ limiter: shared, maxSlice: 50, divisor: 1 });
    for (let i = 0; i < 7; i++) await leased.consume('close', { limit: 1000, windowMs: 60_000 }, 1);
    expect((await shared.consume('close', { limit: 1000, windowMs: 60_000 }, 0)).remaining).toBe(950);
    await leased.close();
    expect((await shared.consume('close', { limit: 1000, windowMs: 60_000 }, 0)).remaining).toBe(993);
  });

  it('loses no unit when the shared limiter reports one window a millisecond apart from one take to the next', async () => {
    const shared = new LeasableMemoryRateLimiter();
    let takes = 0;
    // Redis answers a window's end as its clock plus the key's time to live, read one after the other.
    const leases: LeasableRateLimiter = {
      take: async (keyId, limit, ask) => {
        const lease = await shared.take(keyId, limit, ask);
        return { ...lease, window: lease.window + (takes++ % 2) };
      },
      giveBack: (keyId, limit, window, units) => shared.giveBack(keyId, limit, window, units),
    };
    const limiter = { consume: shared.consume.bind(shared), [CAPABILITIES]: { leases } satisfies Capabilities };
    const leased = new LeasedRateLimiter({ limiter, maxSlice: 10, divisor: 1 });
    const limit = { limit: 100_000, windowMs: 60_000 };
    let spent = 0;
    for (let i = 0; i < 1000; i++) {
      // Costs of 1 spend the slice down to its top-ups; a cost of 7 often finds fewer units and takes with them.
      const cost = i % 5 === 4 ? 7 : 1;
      if ((await leased.consume('jitter', limit, cost)).allowed) spent += cost;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(takes).toBeGreaterThan(100);
    expect(spent).toBe(2200);
    await leased.close();
    expect((await shared.consume('jitter', limit, 0)).remaining).toBe(100_000 - spent);
  });

  it('tells one window from the next by their ends within half a window (sameWindow)', () => {
    expect(sameWindow(1_000_000, 1_000_001, 1000)).toBe(true);
    expect(sameWindow(1_000_001, 1_000_000, 1000)).toBe(true);
    expect(sameWindow(1_000_000, 1_000_499, 1000)).toBe(true);
    expect(sameWindow(1_000_000, 1_000_500, 1000)).toBe(false);
    expect(sameWindow(1_000_000, 1_001_000, 1000)).toBe(false);
  });

  it('drops a slice when its window ends: the next request takes from the fresh window', async () => {
    const time = manual();
    const shared = new LeasableMemoryRateLimiter({ clock: time.clock });
    const leased = new LeasedRateLimiter({ limiter: shared, maxSlice: 50, divisor: 1, clock: time.clock });
    const limit = { limit: 60, windowMs: 1000 };
    for (let i = 0; i < 60; i++) expect((await leased.consume('win', limit, 1)).allowed).toBe(true);
    expect((await leased.consume('win', limit, 1)).allowed).toBe(false);
    time.advance(1000);
    expect(await leased.consume('win', limit, 1)).toMatchObject({ allowed: true, remaining: 59, resetMs: 1000 });
  });

  it('gives the slice back when the key limit changes, and counts the new limit at once', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const leased = new LeasedRateLimiter({ limiter: shared, maxSlice: 50, divisor: 1 });
    await leased.consume('change', { limit: 100, windowMs: 60_000 }, 1);
    expect(leased.held('change')).toBe(49);
    const d = await leased.consume('change', { limit: 10, windowMs: 60_000 }, 1);
    expect(d).toMatchObject({ allowed: true, limit: 10 });
    expect((await shared.consume('change', { limit: 10, windowMs: 60_000 }, 0)).remaining).toBe(
      10 - 1 - leased.held('change') - 1,
    );
  });
});
