import type { RateLimitDecision } from 'keygate';
import { type Case, expectsTimeout, expectsUnavailable, fresh, need, poll, rejection, sleep } from './contract-kit.js';
import type { LimiterContext, RateLimiterHook } from './limiter-hooks.js';

const POLICY = { limit: 5, windowMs: 60_000 };
// How long a restored connection may take to answer again, in milliseconds.
const RECOVERY_MS = 10_000;

async function prunes({ open, expect }: LimiterContext): Promise<void> {
  const fx = await open();
  const rowsOf = need(fx, 'rowsOf');
  const prune = need(fx, 'prune');
  const [short, long] = [fresh('key', 'short'), fresh('key', 'long')];
  await fx.limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
  await fx.limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
  await fx.limiter.consume(long, { limit: 3, windowMs: 60_000 }, 1);
  expect(await rowsOf(short)).toBe(1);
  expect(await rowsOf(long)).toBe(1);
  await sleep(100);
  expect(await prune()).toBeGreaterThan(0);
  expect(await rowsOf(short)).toBe(0);
  expect(await rowsOf(long)).toBe(1);
}

async function timesOut({ open, expect }: LimiterContext): Promise<void> {
  const { limiter, unstick } = need(await open(), 'stalled')(50);
  const call = () => limiter.consume('key_stalled', { limit: 1, windowMs: 1000 }, 1);
  await expectsTimeout(expect, 'rate_limiter_unavailable', call, unstick);
}

async function failsWhenEnded({ open, expect }: LimiterContext): Promise<void> {
  const limiter = await need(await open(), 'ended')();
  const call = () => limiter.consume(fresh('key', 'ended'), { limit: 1, windowMs: 1000 }, 1);
  await expectsUnavailable(expect, 'rate_limiter_unavailable', call);
}

async function migratesConcurrently({ open, expect }: LimiterContext): Promise<void> {
  const { limiters, drop } = await need(await open(), 'unmigrated')(4);
  try {
    await Promise.all(limiters.map((l) => l.migrate()));
    await limiters[0]?.migrate();
    const policy = { limit: 2, windowMs: 60_000 };
    expect(await limiters[1]?.consume('key_1', policy, 1)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiters[2]?.consume('key_1', policy, 1)).toMatchObject({ allowed: true, remaining: 0 });
  } finally {
    await drop?.();
  }
}

async function recoversFromCut({ open, expect }: LimiterContext): Promise<void> {
  const { limiter, cut, restore } = await need(await open(), 'severable')();
  const key = fresh('key', 'cut');
  await limiter.consume(key, POLICY, 1);
  await cut();
  expect(await rejection(limiter.consume(key, POLICY, 1))).toMatchObject({ code: 'rate_limiter_unavailable' });
  await restore();
  const attempt = () => limiter.consume(key, POLICY, 0).catch((): RateLimitDecision | undefined => undefined);
  const answer = await poll(attempt, (a) => a !== undefined, Date.now() + RECOVERY_MS, 100);
  // The unit counted before the cut is kept; one refused during it may or may not have counted.
  expect(answer?.allowed).toBe(true);
  expect(Number(answer?.remaining)).toBeLessThanOrEqual(4);
}

/** The cases of each hook, run when the options name it. */
export const LIMITER_HOOK_CASES: ReadonlyArray<readonly [RateLimiterHook, ...Case<LimiterContext>]> = [
  ['prune', 'keeps one row per key, and prune() deletes the rows of ended windows only', prunes],
  ['stalled', 'rejects at its timeout when the backend never answers, and absorbs the late failure', timesOut],
  [
    'ended',
    'rejects with rate_limiter_unavailable, the client’s error as cause, once its client is closed',
    failsWhenEnded,
  ],
  ['unmigrated', 'migrates idempotently, also when several instances migrate at once', migratesConcurrently],
  ['severable', 'rejects with rate_limiter_unavailable while the connection is cut, and recovers', recoversFromCut],
];
