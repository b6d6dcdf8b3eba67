import { InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';
import { validWholeNumber } from '../validate/whole.js';
import type { TakeRequest } from '../vocabulary/rate-limiter.js';
import { type ConsumeArgs, validConsumeArgs } from './policy.js';

/**
 * Whether two leases' `window`s name one window of a key limited per `windowMs`: they lie within
 * `windowMs / 2` of each other (two windows of a key end at least `windowMs` apart; one window's
 * end may be reported a millisecond or so apart from one take to the next).
 *
 * @example
 * sameWindow(1_764_021_600_000, 1_764_021_600_001, 60_000); // true
 * sameWindow(1_764_021_600_000, 1_764_021_660_000, 60_000); // false
 */
export function sameWindow(a: number, b: number, windowMs: number): boolean {
  return Math.abs(a - b) * 2 < windowMs;
}

/**
 * A take's arguments once checked: `validConsumeArgs`'s plus the ask.
 *
 * @example
 * const args: TakeArgs = validTakeArgs('key_1', { limit: 10, windowMs: 1000 }, { need: 1, want: 5, divisor: 4 });
 */
export interface TakeArgs extends ConsumeArgs {
  readonly want: number;
  readonly divisor: number;
}

/**
 * Checks the arguments of {@link LeasableRateLimiter.take} as every keygate limiter does
 * (`cost` is the ask's `need`). For authors of limiters over other backends.
 *
 * @example
 * const { keyId, limit, windowMs, cost: need, want, divisor } = validTakeArgs(id, policy, ask);
 */
export function validTakeArgs(keyId: unknown, limit: unknown, ask: unknown): TakeArgs {
  if (ask === null || typeof ask !== 'object')
    throw new InvalidInputError('ask', 'ask must be { need, want, divisor }');
  const { need, want, divisor } = ask as Partial<TakeRequest>;
  validWholeNumber('need', need, 0);
  const args = validConsumeArgs(keyId, limit, need);
  return {
    ...args,
    want: validWholeNumber('want', want, need as number),
    divisor: validWholeNumber('divisor', divisor),
  };
}

/**
 * Checks the arguments of {@link LeasableRateLimiter.giveBack}: the key and limit as `consume`'s,
 * `window` a finite number, `units` a whole number >= 0. For authors of limiters over other backends.
 *
 * @example
 * const { keyId, windowMs } = validGiveBackArgs(id, policy, lease.window, 3);
 */
export function validGiveBackArgs(keyId: unknown, limit: unknown, window: unknown, units: unknown): ConsumeArgs {
  if (typeof window !== 'number' || !Number.isFinite(window)) {
    throw new InvalidInputError('window', `window must be a lease's window, got ${quote(window)}`);
  }
  return validConsumeArgs(keyId, limit, validWholeNumber('units', units, 0));
}

/**
 * The units a take grants when `remaining` units are left: see {@link TakeRequest}. Backends whose
 * grant is computed outside the database (memory) use it; the others compute the same expression.
 *
 * @example
 * grantOf(100, { need: 1, want: 50, divisor: 8 }); // 12
 */
export function grantOf(remaining: number, ask: TakeRequest): number {
  if (remaining < ask.need) return 0;
  return Math.min(remaining, Math.max(ask.need, Math.min(ask.want, Math.floor(remaining / ask.divisor))));
}
