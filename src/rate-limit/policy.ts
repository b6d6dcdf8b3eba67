import { InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';
import type { RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';

// The longest rate-limit window, in milliseconds: 366 days. Longer "windows" are quotas, which want
// billing periods rather than a window opened by a first request.
const MAX_WINDOW_MS = 366 * 86_400_000;

const KEY_ID_MAX = 512;
const RATE_LIMIT_FIELDS = ['limit', 'windowMs'];

// The field an error names, built only when one is thrown.
function fieldName(prefix: string | undefined, member: string): string {
  return prefix ? `${prefix}.${member}` : member;
}

/**
 * Checks a `{ limit, windowMs }` value: `limit` a whole number >= 1 (a safe integer), `windowMs` a
 * number > 0 and at most 366 days. Errors name `<prefix>` for a value that is not an
 * object, `<prefix>.limit` and `<prefix>.windowMs` for a bad member (with no prefix: `limit`,
 * `windowMs`). With `strict`, any other property is refused first, reason `unknown_option`, with the
 * nearest name (a misspelt `windowms`: "did you mean `windowMs`?").
 *
 * @example
 * checkRateLimit({ limit: 100, windowMs: 60_000 }, 'rateLimit', true); // the same object back
 */
export function checkRateLimit(value: unknown, prefix?: string, strict = false): RateLimit {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(prefix ?? 'limit', `${prefix ?? 'limit'} must be an object { limit, windowMs }`);
  }
  // With `strict`, a member of another name is refused first: a misspelt `windowms` is named as
  // such ("did you mean `windowMs`?"), not reported as a missing `windowMs`.
  if (strict) checkOptionNames(value, RATE_LIMIT_FIELDS, 'a rate limit', prefix);
  const { limit, windowMs } = value as Partial<RateLimit>;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    const field = fieldName(prefix, 'limit');
    throw new InvalidInputError(field, `${field} must be a whole number >= 1, got ${quote(limit)}`);
  }
  if (typeof windowMs !== 'number' || !(windowMs > 0 && windowMs <= MAX_WINDOW_MS)) {
    const field = fieldName(prefix, 'windowMs');
    throw new InvalidInputError(
      field,
      `${field} must be a number of milliseconds > 0 and at most ${MAX_WINDOW_MS} (366 days), got ${quote(windowMs)}`,
    );
  }
  return value as RateLimit;
}

/**
 * What a limiter counts with, once its arguments are checked: the window in whole milliseconds.
 *
 * @example
 * const args: ConsumeArgs = validConsumeArgs('key_1', { limit: 10, windowMs: 1000.5 }, 1); // windowMs 1001
 */
export interface ConsumeArgs {
  readonly keyId: string;
  readonly limit: number;
  /** `windowMs` rounded up to a whole millisecond (a longer window only ever allows less). */
  readonly windowMs: number;
  readonly cost: number;
}

/**
 * Checks the arguments of `RateLimiter.consume` as every keygate limiter does, throwing
 * `InvalidInputError` naming `keyId` (a non-empty string of at most 512 characters), `limit`,
 * `windowMs` or `cost` (a whole number >= 0). For authors of limiters over other backends.
 *
 * @example
 * const { keyId, limit, windowMs, cost } = validConsumeArgs(id, { limit: 10, windowMs: 1000 }, 1);
 */
export function validConsumeArgs(keyId: unknown, limit: unknown, cost: unknown): ConsumeArgs {
  const windowMs = consumeWindowMs(keyId, limit, cost);
  return { keyId: keyId as string, limit: (limit as RateLimit).limit, windowMs, cost: cost as number };
}

/**
 * The checks of {@link validConsumeArgs} without building its answer, for the memory limiter's hot
 * path: returns the window in whole milliseconds. Internal.
 */
export function consumeWindowMs(keyId: unknown, limit: unknown, cost: unknown): number {
  if (typeof keyId !== 'string' || keyId === '' || keyId.length > KEY_ID_MAX) {
    throw new InvalidInputError('keyId', `keyId must be a non-empty string of at most ${KEY_ID_MAX} characters`);
  }
  const policy = checkRateLimit(limit);
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost < 0) {
    throw new InvalidInputError('cost', `cost must be a whole number >= 0, got ${quote(cost)}`);
  }
  return Math.ceil(policy.windowMs);
}
