import { InvalidInputError } from '#errors';

/**
 * When a failed delivery is tried again: exponential backoff with full jitter. The n-th failure
 * (n from 1) waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))); a delivery whose
 * next attempt would fall more than `giveUpAfterMs` after it was created fails for good.
 *
 * @example
 * const retry: RetryPolicy = { baseDelayMs: 30_000, maxDelayMs: 6 * 3_600_000, giveUpAfterMs: 24 * 3_600_000 };
 */
export interface RetryPolicy {
  /** The first ceiling, in milliseconds. @default 30_000 */
  baseDelayMs?: number;
  /** The largest ceiling, in milliseconds. @default 21_600_000 (6 hours) */
  maxDelayMs?: number;
  /** How long after its creation a delivery is still tried, in milliseconds. @default 86_400_000 (24 hours) */
  giveUpAfterMs?: number;
}

/**
 * A {@link RetryPolicy} with every default filled in.
 *
 * @example
 * const policy: FullRetryPolicy = { ...DEFAULT_RETRY, baseDelayMs: 10_000 };
 */
export type FullRetryPolicy = Required<RetryPolicy>;

/**
 * The retry policy's defaults: 30 s, doubling, at most 6 h apart, for 24 h.
 *
 * @example
 * DEFAULT_RETRY.maxDelayMs // 21_600_000
 */
export const DEFAULT_RETRY: FullRetryPolicy = Object.freeze({
  baseDelayMs: 30_000,
  maxDelayMs: 6 * 3_600_000,
  giveUpAfterMs: 24 * 3_600_000,
});

/** `policy` checked (each a number of milliseconds > 0) and completed with the defaults. */
export function validRetryPolicy(policy: RetryPolicy = {}): FullRetryPolicy {
  const out = { ...DEFAULT_RETRY, ...Object.fromEntries(Object.entries(policy).filter(([, v]) => v !== undefined)) };
  for (const [name, value] of Object.entries(out)) {
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw new InvalidInputError(`retry.${name}`, `retry.${name} must be a number of milliseconds > 0`);
    }
  }
  return out as FullRetryPolicy;
}

/** The ceiling of the wait after the `failures`-th failure: min(max, base * 2^(failures-1)). */
export function backoffCeilingMs(policy: FullRetryPolicy, failures: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(Math.max(failures - 1, 0), 40));
}

/**
 * When to try again after the `failures`-th failure at `nowMs`, or null to give up.
 *
 * @param random a number in [0, 1) (full jitter).
 */
export function nextAttemptMs(
  policy: FullRetryPolicy,
  args: { nowMs: number; createdMs: number; failures: number; random: number },
): number | null {
  const at = args.nowMs + Math.floor(args.random * backoffCeilingMs(policy, args.failures));
  return at - args.createdMs > policy.giveUpAfterMs ? null : at;
}
