import type { RateLimitDecision } from 'keygate';
import { type Case, fresh, poll, rejection } from './contract-kit.js';
import type { ContractTestApi } from './contract-types.js';
import { LIMITER_HOOK_CASES } from './limiter-engine-cases.js';
import type { LimiterContext, LimiterFixture, RateLimiterHook } from './limiter-hooks.js';
import { LEASE_CASES } from './limiter-lease-contract.js';

/** A fresh limiter and a key of its own, and `consume(cost, limit)` of that key in a window of a minute. */
async function consumer({ open }: LimiterContext, label: string, limit: number) {
  const { limiter } = await open();
  const key = fresh('key', label);
  return (cost: number, limitNow = limit) => limiter.consume(key, { limit: limitNow, windowMs: 60_000 }, cost);
}

async function countsExactly(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'exact', 3);
  const decisions: RateLimitDecision[] = [];
  for (let i = 0; i < 5; i++) decisions.push(await consume(1));
  c.expect(decisions.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
    [true, 3, 2],
    [true, 3, 1],
    [true, 3, 0],
    [false, 3, 0],
    [false, 3, 0],
  ]);
  for (const d of decisions) {
    c.expect(d.resetMs).toBeGreaterThan(0);
    c.expect(d.resetMs).toBeLessThanOrEqual(60_000);
  }
}

async function countsConcurrently(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'burst', 150);
  const decisions = await Promise.all(Array.from({ length: 400 }, () => consume(1)));
  const allowed = decisions.filter((d) => d.allowed);
  c.expect(allowed).toHaveLength(150);
  // Atomic: every allowed request left a different count behind (149 down to 0).
  c.expect(new Set(allowed.map((d) => d.remaining)).size).toBe(150);
  c.expect((await consume(1)).allowed).toBe(false);
}

async function countsEachKey({ open, expect }: LimiterContext): Promise<void> {
  const { limiter } = await open();
  const [a, b] = [fresh('key', 'a'), fresh('key', 'b')];
  const policy = { limit: 2, windowMs: 60_000 };
  await limiter.consume(a, policy, 2);
  expect(await limiter.consume(a, policy, 1)).toMatchObject({ allowed: false, remaining: 0 });
  expect(await limiter.consume(b, policy, 1)).toMatchObject({ allowed: true, remaining: 1 });
}

async function countsCost(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'cost', 10);
  const remaining: number[] = [];
  for (let i = 0; i < 4; i++) remaining.push((await consume(3)).remaining);
  c.expect(remaining).toEqual([7, 4, 1, 1]);
  c.expect(await consume(1)).toMatchObject({ allowed: true, remaining: 0 });
}

async function refusesOverCost(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'over', 5);
  await consume(4);
  c.expect(await consume(2)).toMatchObject({ allowed: false, remaining: 1 });
  c.expect(await consume(1)).toMatchObject({ allowed: true, remaining: 0 });
}

async function refusesCostOverLimit(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'huge', 5);
  c.expect(await consume(6)).toMatchObject({ allowed: false, limit: 5, remaining: 5 });
  c.expect(await consume(5)).toMatchObject({ allowed: true, remaining: 0 });
}

async function answersZeroCost(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'zero', 4);
  await consume(3);
  c.expect(await consume(0)).toMatchObject({ allowed: true, remaining: 1 });
  c.expect(await consume(1)).toMatchObject({ allowed: true, remaining: 0 });
  c.expect(await consume(0)).toMatchObject({ allowed: true, remaining: 0 });
}

async function appliesChangedLimit(c: LimiterContext): Promise<void> {
  const consume = await consumer(c, 'change', 10);
  await consume(6);
  c.expect(await consume(1, 5)).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
  c.expect(await consume(1, 20)).toMatchObject({ allowed: true, remaining: 13 });
}

const isAllowed = (d: RateLimitDecision) => d.allowed;

async function opensFreshWindow({ open, expect, patience }: LimiterContext): Promise<void> {
  const { limiter, advance } = await open();
  const key = fresh('key', 'reset');
  const windowMs = 300;
  const policy = { limit: 2, windowMs };
  await limiter.consume(key, policy, 2);
  const refused = await limiter.consume(key, policy, 1);
  expect(refused).toMatchObject({ allowed: false, remaining: 0 });
  advance?.(refused.resetMs);
  // Real time: poll until the window has ended (bounded), then check what the fresh window holds.
  const next = await poll(() => limiter.consume(key, policy, 1), isAllowed, Date.now() + patience);
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
  const context: LimiterContext = { open: factory, expect: t.expect, patience: options.patience ?? 10_000 };
  const cases: ReadonlyArray<Case<LimiterContext>> = [
    ['allows exactly limit units in a window, then refuses, reporting limit, remaining and reset', countsExactly],
    ['allows exactly limit units among 400 concurrent requests, each seeing its own count', countsConcurrently],
    ['counts each key on its own', countsEachKey],
    ['counts a cost above 1 as that many units', countsCost],
    ['refuses a cost greater than what remains, and counts nothing for it', refusesOverCost],
    ['refuses a cost greater than the limit on a fresh key, and the key keeps its whole limit', refusesCostOverLimit],
    ['answers a cost of 0 with the remaining units and counts nothing', answersZeroCost],
    ['applies a changed limit at once, within the open window', appliesChangedLimit],
    ['opens a fresh window with the whole limit once the window has ended', opensFreshWindow],
    ...LEASE_CASES,
    ...LIMITER_HOOK_CASES.filter(([hook]) => options.hooks?.includes(hook)).map(([, ...rest]) => rest),
    ...BAD_ARGUMENTS.map(
      ([field, title, keyId, limit, cost]): Case<LimiterContext> => [
        `names ${field} in the invalid_input error for ${title}`,
        async ({ open, expect }) => {
          const { limiter } = await open();
          const consume = limiter.consume as (keyId: unknown, limit: unknown, cost: unknown) => Promise<unknown>;
          expect(await rejection(consume.call(limiter, keyId, limit, cost))).toMatchObject({
            code: 'invalid_input',
            field,
          });
        },
      ],
    ),
  ];
  t.describe(`rate limiter contract: ${name}`, () => {
    for (const [title, run] of cases) t.it(title, () => run(context));
  });
}
