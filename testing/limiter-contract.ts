import type { RateLimitDecision, RateLimiter } from 'keygate';
import type { ContractTestApi } from './contract-types.js';
import { LIMITER_HOOK_CASES } from './limiter-engine-cases.js';
import type { RateLimiterHook, RateLimiterHooks } from './limiter-hooks.js';
import { describeLeaseCases } from './limiter-lease-contract.js';

/**
 * A fresh limiter for one test of {@link describeRateLimiterContract}, and how to move its time on.
 *
 * @example
 * let now = 0;
 * const fixture: LimiterFixture = { limiter: new MemoryRateLimiter({ clock: () => now }), advance: (ms) => { now += ms; } };
 */
export interface LimiterFixture extends RateLimiterHooks {
  limiter: RateLimiter;
  /** Moves the limiter's clock on by `ms` (limiters with an injected clock); without it, real time passes. */
  advance?: (ms: number) => void;
}

type Open = () => Promise<LimiterFixture>;
type Expect = ContractTestApi['expect'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A run's own prefix: shared backends need no cleaning between tests, nor between runs that share them.
const RUN = Math.random().toString(36).slice(2, 10);
let keys = 0;
const freshKey = (label: string) => `key_${label}_${RUN}_${++keys}`;

/** What `promise` rejects with; the resolved value when it does not (which then fails the match). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return err;
  }
}

async function countsExactly(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('exact');
  const policy = { limit: 3, windowMs: 60_000 };
  const decisions: RateLimitDecision[] = [];
  for (let i = 0; i < 5; i++) decisions.push(await limiter.consume(key, policy, 1));
  expect(decisions.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
    [true, 3, 2],
    [true, 3, 1],
    [true, 3, 0],
    [false, 3, 0],
    [false, 3, 0],
  ]);
  for (const d of decisions) {
    expect(d.resetMs).toBeGreaterThan(0);
    expect(d.resetMs).toBeLessThanOrEqual(60_000);
  }
}

async function countsConcurrently(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('burst');
  const policy = { limit: 150, windowMs: 60_000 };
  const decisions = await Promise.all(Array.from({ length: 400 }, () => limiter.consume(key, policy, 1)));
  const allowed = decisions.filter((d) => d.allowed);
  expect(allowed).toHaveLength(150);
  // Atomic: every allowed request left a different count behind (149 down to 0).
  expect(new Set(allowed.map((d) => d.remaining)).size).toBe(150);
  expect((await limiter.consume(key, policy, 1)).allowed).toBe(false);
}

async function countsEachKey(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const [a, b] = [freshKey('a'), freshKey('b')];
  const policy = { limit: 2, windowMs: 60_000 };
  await limiter.consume(a, policy, 2);
  expect(await limiter.consume(a, policy, 1)).toMatchObject({ allowed: false, remaining: 0 });
  expect(await limiter.consume(b, policy, 1)).toMatchObject({ allowed: true, remaining: 1 });
}

async function countsCost(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('cost');
  const policy = { limit: 10, windowMs: 60_000 };
  const remaining: number[] = [];
  for (let i = 0; i < 4; i++) remaining.push((await limiter.consume(key, policy, 3)).remaining);
  expect(remaining).toEqual([7, 4, 1, 1]);
  expect(await limiter.consume(key, policy, 1)).toMatchObject({ allowed: true, remaining: 0 });
}

async function refusesOverCost(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('over');
  const policy = { limit: 5, windowMs: 60_000 };
  await limiter.consume(key, policy, 4);
  expect(await limiter.consume(key, policy, 2)).toMatchObject({ allowed: false, remaining: 1 });
  expect(await limiter.consume(key, policy, 1)).toMatchObject({ allowed: true, remaining: 0 });
}

async function refusesCostOverLimit(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('huge');
  const policy = { limit: 5, windowMs: 60_000 };
  expect(await limiter.consume(key, policy, 6)).toMatchObject({ allowed: false, limit: 5, remaining: 5 });
  expect(await limiter.consume(key, policy, 5)).toMatchObject({ allowed: true, remaining: 0 });
}

async function answersZeroCost(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('zero');
  const policy = { limit: 4, windowMs: 60_000 };
  await limiter.consume(key, policy, 3);
  expect(await limiter.consume(key, policy, 0)).toMatchObject({ allowed: true, remaining: 1 });
  expect(await limiter.consume(key, policy, 1)).toMatchObject({ allowed: true, remaining: 0 });
  expect(await limiter.consume(key, policy, 0)).toMatchObject({ allowed: true, remaining: 0 });
}

async function appliesChangedLimit(open: Open, expect: Expect): Promise<void> {
  const { limiter } = await open();
  const key = freshKey('change');
  await limiter.consume(key, { limit: 10, windowMs: 60_000 }, 6);
  expect(await limiter.consume(key, { limit: 5, windowMs: 60_000 }, 1)).toMatchObject({
    allowed: false,
    limit: 5,
    remaining: 0,
  });
  expect(await limiter.consume(key, { limit: 20, windowMs: 60_000 }, 1)).toMatchObject({
    allowed: true,
    remaining: 13,
  });
}

async function opensFreshWindow(open: Open, expect: Expect, patience: number): Promise<void> {
  const { limiter, advance } = await open();
  const key = freshKey('reset');
  const windowMs = 300;
  const policy = { limit: 2, windowMs };
  await limiter.consume(key, policy, 2);
  const refused = await limiter.consume(key, policy, 1);
  expect(refused).toMatchObject({ allowed: false, remaining: 0 });
  let next = refused;
  if (advance) {
    advance(refused.resetMs);
    next = await limiter.consume(key, policy, 1);
  } else {
    // Real time: poll until the window has ended (bounded), then check what the fresh window holds.
    for (const deadline = Date.now() + patience; !next.allowed && Date.now() < deadline; ) {
      await sleep(50);
      next = await limiter.consume(key, policy, 1);
    }
  }
  expect(next).toMatchObject({ allowed: true, remaining: 1 });
  expect(next.resetMs).toBeGreaterThan(0);
  expect(next.resetMs).toBeLessThanOrEqual(windowMs);
}

/** Bad arguments: the field the `invalid_input` error names, what the case is, and the arguments. */
const BAD_ARGUMENTS: ReadonlyArray<
  readonly [field: string, title: string, keyId: unknown, limit: unknown, cost: unknown]
> = [
  ['keyId', 'an empty key id', '', { limit: 1, windowMs: 1000 }, 1],
  ['keyId', 'a number as key id', 42, { limit: 1, windowMs: 1000 }, 1],
  ['keyId', 'a key id of 513 characters', 'k'.repeat(513), { limit: 1, windowMs: 1000 }, 1],
  ['limit', 'a null limit', 'key', null, 1],
  ['limit', 'a bare number as limit', 'key', 100, 1],
  ['limit', 'a limit of 0', 'key', { limit: 0, windowMs: 1000 }, 1],
  ['limit', 'a fractional limit', 'key', { limit: 1.5, windowMs: 1000 }, 1],
  ['limit', 'a limit as text', 'key', { limit: '10', windowMs: 1000 }, 1],
  ['limit', 'an infinite limit', 'key', { limit: Number.POSITIVE_INFINITY, windowMs: 1000 }, 1],
  ['windowMs', 'a window of 0', 'key', { limit: 1, windowMs: 0 }, 1],
  ['windowMs', 'a negative window', 'key', { limit: 1, windowMs: -5 }, 1],
  ['windowMs', 'a NaN window', 'key', { limit: 1, windowMs: Number.NaN }, 1],
  ['windowMs', 'an infinite window', 'key', { limit: 1, windowMs: Number.POSITIVE_INFINITY }, 1],
  ['windowMs', 'a window of 367 days', 'key', { limit: 1, windowMs: 367 * 86_400_000 }, 1],
  ['windowMs', 'a missing window', 'key', { limit: 1 }, 1],
  ['cost', 'a negative cost', 'key', { limit: 1, windowMs: 1000 }, -1],
  ['cost', 'a fractional cost', 'key', { limit: 1, windowMs: 1000 }, 0.5],
  ['cost', 'a NaN cost', 'key', { limit: 1, windowMs: 1000 }, Number.NaN],
  ['cost', 'a cost as text', 'key', { limit: 1, windowMs: 1000 }, '1'],
  ['cost', 'a missing cost', 'key', { limit: 1, windowMs: 1000 }, undefined],
];

/**
 * Options of {@link describeRateLimiterContract}.
 *
 * @example
 * describeRateLimiterContract('MyLimiter', factory, t, { patience: 30_000 });
 */
export interface RateLimiterContractOptions {
  /** How long to wait for a window to end in real time (fixtures without `advance`), in milliseconds. Default `10_000`. */
  patience?: number;
  /**
   * The {@link RateLimiterHooks} every fixture has; the suite adds the cases that reach around the
   * limiter through them (stored rows and `prune()`, a stalled, ended or cut client, a concurrent
   * migration). Default `[]`.
   */
  hooks?: readonly RateLimiterHook[];
}

/**
 * The behaviour every `RateLimiter` must have, as a test suite a host runs against its own limiter:
 * exactly `limit` units a window (concurrency included, each allowed request seeing its own count),
 * keys counted apart, costs above 1 and of 0, a cost over what remains refused and not counted, a
 * changed limit applied at once, a fresh window once one ends, and an `invalid_input` error naming
 * the bad argument; for a limiter declaring the `leases` capability, its `take` and `giveBack` and a
 * `LeasedRateLimiter` over it (three instances never exceed a limit). With real time (shared backends), a window's end is found by polling a short
 * window, never by timing. Key ids carry a per-run prefix, so a fixture may share one backend.
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeRateLimiterContract } from 'keygate/testing';
 * describeRateLimiterContract('MyLimiter', async () => ({ limiter: new MyLimiter(client) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeRateLimiterContract(
  name: string,
  factory: () => Promise<LimiterFixture>,
  t: ContractTestApi,
  options: RateLimiterContractOptions = {},
): void {
  const { describe, it, expect } = t;
  const patience = options.patience ?? 10_000;
  describe(`rate limiter contract: ${name}`, () => {
    it('allows exactly limit units in a window, then refuses, reporting limit, remaining and reset', () =>
      countsExactly(factory, expect));
    it('allows exactly limit units among 400 concurrent requests, each seeing its own count', () =>
      countsConcurrently(factory, expect));
    it('counts each key on its own', () => countsEachKey(factory, expect));
    it('counts a cost above 1 as that many units', () => countsCost(factory, expect));
    it('refuses a cost greater than what remains, and counts nothing for it', () => refusesOverCost(factory, expect));
    it('refuses a cost greater than the limit on a fresh key, and the key keeps its whole limit', () =>
      refusesCostOverLimit(factory, expect));
    it('answers a cost of 0 with the remaining units and counts nothing', () => answersZeroCost(factory, expect));
    it('applies a changed limit at once, within the open window', () => appliesChangedLimit(factory, expect));
    it('opens a fresh window with the whole limit once the window has ended', () =>
      opensFreshWindow(factory, expect, patience));
    describeLeaseCases(t, factory, patience);
    for (const [hook, title, run] of LIMITER_HOOK_CASES) {
      if (options.hooks?.includes(hook)) it(title, async () => run(await factory(), expect));
    }
    for (const [field, title, keyId, limit, cost] of BAD_ARGUMENTS) {
      it(`names ${field} in the invalid_input error for ${title}`, async () => {
        const { limiter } = await factory();
        const consume = limiter.consume as (keyId: unknown, limit: unknown, cost: unknown) => Promise<unknown>;
        expect(await rejection(consume.call(limiter, keyId, limit, cost))).toMatchObject({
          code: 'invalid_input',
          field,
        });
      });
    }
  });
}
