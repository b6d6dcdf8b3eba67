import type { RateLimitDecision, RateLimiter } from 'keygate';
import type { ContractTestApi } from './contract-types.js';
import type { RateLimiterHook, RateLimiterHooks } from './limiter-hooks.js';

type Expect = ContractTestApi['expect'];
/** A fixture's limiter with the hooks it has. */
export type HookedLimiter = RateLimiterHooks & { readonly limiter: RateLimiter };
type Case = readonly [hook: RateLimiterHook, title: string, run: (fx: HookedLimiter, expect: Expect) => Promise<void>];

// A run's own prefix: shared backends need no cleaning between tests, nor between runs that share them.
const RUN = Math.random().toString(36).slice(2, 10);
let keys = 0;
const freshKey = (label: string) => `key_${label}_${RUN}_${++keys}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const POLICY = { limit: 5, windowMs: 60_000 };
// How late past its deadline a stalled call may settle on a loaded machine, in milliseconds.
const DEADLINE_SLACK_MS = 1_000;
// How long a restored connection may take to answer again, in milliseconds.
const RECOVERY_MS = 10_000;

function need<K extends RateLimiterHook>(hooks: RateLimiterHooks, name: K): NonNullable<RateLimiterHooks[K]> {
  const hook = hooks[name];
  if (!hook) throw new Error(`options.hooks names ${name}, so every fixture must have it`);
  return hook as NonNullable<RateLimiterHooks[K]>;
}

async function reason(promise: Promise<unknown>): Promise<{ code?: unknown; cause?: unknown } | undefined> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: unknown; cause?: unknown };
  }
  return undefined;
}

async function prunes(fx: HookedLimiter, expect: Expect): Promise<void> {
  const rowsOf = need(fx, 'rowsOf');
  const prune = need(fx, 'prune');
  const [short, long] = [freshKey('short'), freshKey('long')];
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

async function timesOut(hooks: HookedLimiter, expect: Expect): Promise<void> {
  const { limiter, unstick } = need(hooks, 'stalled')(50);
  const startedMs = Date.now();
  let settled = false;
  const outcome = reason(limiter.consume('key_stalled', { limit: 1, windowMs: 1000 }, 1)).finally(() => {
    settled = true;
  });
  await sleep(25);
  expect(settled).toBe(false);
  const err = await outcome;
  const elapsedMs = Date.now() - startedMs;
  expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
  expect(/timed out after 50 ms/.test(String((err?.cause as Error | undefined)?.message))).toBe(true);
  expect(elapsedMs).toBeGreaterThan(48);
  expect(elapsedMs).toBeLessThanOrEqual(50 + DEADLINE_SLACK_MS);
  // The failure that comes after the deadline is absorbed: no unhandled rejection.
  unstick(new Error('connection reset'));
  await sleep(20);
}

async function failsWhenEnded(hooks: HookedLimiter, expect: Expect): Promise<void> {
  const limiter = await need(hooks, 'ended')();
  const err = await reason(limiter.consume(freshKey('ended'), { limit: 1, windowMs: 1000 }, 1));
  expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
  expect(err?.cause).toBeInstanceOf(Error);
}

async function migratesConcurrently(hooks: HookedLimiter, expect: Expect): Promise<void> {
  const { limiters, drop } = await need(hooks, 'unmigrated')(4);
  try {
    await Promise.all(limiters.map((l) => l.migrate()));
    await limiters[0]?.migrate();
    expect(await limiters[1]?.consume('key_1', { limit: 2, windowMs: 60_000 }, 1)).toMatchObject({
      allowed: true,
      remaining: 1,
    });
    expect(await limiters[2]?.consume('key_1', { limit: 2, windowMs: 60_000 }, 1)).toMatchObject({
      allowed: true,
      remaining: 0,
    });
  } finally {
    await drop?.();
  }
}

async function recoversFromCut(hooks: HookedLimiter, expect: Expect): Promise<void> {
  const { limiter, cut, restore } = await need(hooks, 'severable')();
  const key = freshKey('cut');
  await limiter.consume(key, POLICY, 1);
  await cut();
  expect(await reason(limiter.consume(key, POLICY, 1))).toMatchObject({ code: 'rate_limiter_unavailable' });
  await restore();
  let answer: RateLimitDecision | undefined;
  for (const deadline = Date.now() + RECOVERY_MS; !answer && Date.now() < deadline; ) {
    answer = await limiter.consume(key, POLICY, 0).catch(() => undefined);
    if (!answer) await sleep(100);
  }
  // The unit counted before the cut is kept; one refused during it may or may not have counted.
  expect(answer?.allowed).toBe(true);
  expect(Number(answer?.remaining)).toBeLessThanOrEqual(4);
}

/** The cases of each hook, run when the options name it. */
export const LIMITER_HOOK_CASES: readonly Case[] = [
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
