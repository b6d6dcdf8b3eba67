import { capabilityOf, LeasedRateLimiter, type RateLimiter } from 'keygate';
import type { LeasableRateLimiter } from 'keygate/store-kit';
import { type Case, type Expect, fresh, poll } from './contract-kit.js';
import type { LimiterContext } from './limiter-hooks.js';

// The `leases` capability's cases of `describeRateLimiterContract` (keygate's limiters all declare it).

/** What a lease case works with: a fresh limiter that declares `leases`, the capability, and a key of its own. */
interface Leasing {
  readonly limiter: RateLimiter;
  readonly leases: LeasableRateLimiter;
  readonly key: string;
  readonly expect: Expect;
  readonly advance?: (ms: number) => void;
  readonly patience: number;
}

/** A case run on a fresh limiter if it declares the `leases` capability, which checks nothing of one that does not. */
function leasing(label: string, run: (l: Leasing) => Promise<void>): (c: LimiterContext) => Promise<void> {
  return async ({ open, expect, patience }) => {
    const { limiter, advance } = await open();
    const leases = capabilityOf(limiter, 'leases');
    if (leases) await run({ limiter, leases, key: fresh('key', `lease_${label}`), expect, advance, patience });
  };
}

async function grantsByTheRule({ limiter, leases, key, expect }: Leasing): Promise<void> {
  const policy = { limit: 100, windowMs: 60_000 };
  const first = await leases.take(key, policy, { need: 1, want: 50, divisor: 8 });
  expect([first.granted, first.limit, first.remaining]).toEqual([12, 100, 88]);
  expect(first.resetMs).toBeGreaterThan(0);
  expect(first.resetMs).toBeLessThanOrEqual(60_000);
  expect((await limiter.consume(key, policy, 1)).remaining).toBe(87);
  const again = await leases.take(key, policy, { need: 30, want: 40, divisor: 8 });
  expect([again.granted, again.remaining]).toEqual([30, 57]);
  // Same window, same identity (within half a window).
  expect(Math.abs(again.window - first.window) * 2).toBeLessThanOrEqual(60_000);
  const rest = await leases.take(key, policy, { need: 0, want: 1000, divisor: 1 });
  expect([rest.granted, rest.remaining]).toEqual([57, 0]);
  expect(await leases.take(key, policy, { need: 1, want: 5, divisor: 1 })).toMatchObject({ granted: 0, remaining: 0 });
  expect(await limiter.consume(key, policy, 1)).toMatchObject({ allowed: false, remaining: 0 });
}

async function refusesNeedOverRemaining({ limiter, leases, key, expect }: Leasing): Promise<void> {
  const policy = { limit: 5, windowMs: 60_000 };
  await limiter.consume(key, policy, 3);
  expect(await leases.take(key, policy, { need: 3, want: 3, divisor: 1 })).toMatchObject({ granted: 0, remaining: 2 });
  expect(await limiter.consume(key, policy, 2)).toMatchObject({ allowed: true, remaining: 0 });
}

async function givesBackWithinWindow({ limiter, leases, key, expect }: Leasing): Promise<void> {
  const policy = { limit: 10, windowMs: 60_000 };
  const lease = await leases.take(key, policy, { need: 10, want: 10, divisor: 1 });
  expect(lease.granted).toBe(10);
  await leases.giveBack(key, policy, lease.window, 4);
  expect((await limiter.consume(key, policy, 0)).remaining).toBe(4);
  await leases.giveBack(key, policy, lease.window, 100);
  expect((await limiter.consume(key, policy, 0)).remaining).toBe(10);
}

async function ignoresEndedWindow({ limiter, leases, key, expect, advance, patience }: Leasing): Promise<void> {
  const policy = { limit: 2, windowMs: 300 };
  const old = await leases.take(key, policy, { need: 2, want: 2, divisor: 1 });
  expect(old.granted).toBe(2);
  const take = () => leases.take(key, policy, { need: 1, want: 1, divisor: 1 });
  advance?.(old.resetMs);
  const next = await poll(take, (l) => l.granted > 0, Date.now() + patience);
  expect(next).toMatchObject({ granted: 1, remaining: 1 });
  expect(next.window).not.toBe(old.window);
  // The old window's units ended with it: giving them back must not lift the new window.
  await leases.giveBack(key, policy, old.window, 2);
  expect((await limiter.consume(key, policy, 0)).remaining).toBe(1);
}

async function grantsConcurrently({ leases, key, expect }: Leasing): Promise<void> {
  const policy = { limit: 100, windowMs: 60_000 };
  const take = () => leases.take(key, policy, { need: 1, want: 7, divisor: 1 });
  const grants = await Promise.all(Array.from({ length: 60 }, take));
  expect(grants.reduce((sum, g) => sum + g.granted, 0)).toBe(100);
  expect(grants.filter((g) => g.granted > 0 && g.granted < 7)).toHaveLength(1);
}

async function leasedNeverExceeds({ limiter, key, expect }: Leasing): Promise<void> {
  const policy = { limit: 150, windowMs: 60_000 };
  const maxSlice = 10;
  const wrappers = [0, 1, 2].map(() => new LeasedRateLimiter({ limiter, maxSlice, divisor: 4 }));
  const decisions = await Promise.all(
    Array.from({ length: 600 }, (_, i) => wrappers[i % 3]?.consume(key, policy, 1) as Promise<{ allowed: boolean }>),
  );
  const allowed = decisions.filter((d) => d.allowed).length;
  expect(allowed).toBeLessThanOrEqual(150);
  // Early refusal: at most (instances - 1) * (maxSlice - 1) units sat in the other wrappers' slices.
  expect(150 - allowed).toBeLessThanOrEqual(2 * (maxSlice - 1));
  await Promise.all(wrappers.map((w) => w.close()));
  // Every unspent unit went back: the window holds exactly what was allowed.
  expect((await limiter.consume(key, policy, 0)).remaining).toBe(150 - allowed);
}

/** The `leases` cases of the rate-limiter contract, as `[title, run]`. */
export const LEASE_CASES: ReadonlyArray<Case<LimiterContext>> = [
  [
    'leases: a take grants max(need, min(want, remaining / divisor)) of the window and counts it',
    leasing('rule', grantsByTheRule),
  ],
  [
    'leases: a take whose need exceeds what remains grants and counts nothing',
    leasing('need', refusesNeedOverRemaining),
  ],
  ['leases: a give-back uncounts units of the open window, never below 0', leasing('back', givesBackWithinWindow)],
  ['leases: a give-back to a window that has ended leaves the new window alone', leasing('ended', ignoresEndedWindow)],
  ['leases: 60 concurrent takes grant exactly the limit between them', leasing('burst', grantsConcurrently)],
  [
    'leases: three LeasedRateLimiters never exceed the limit, refuse early by at most 2 * (maxSlice - 1), and give back on close',
    leasing('wrapped', leasedNeverExceeds),
  ],
];
