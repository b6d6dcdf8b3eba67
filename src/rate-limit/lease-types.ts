import { InvalidInputError } from '#errors';
import type { RateLimit } from '../types.js';
import { quote } from '../validate/describe.js';
import { validWholeNumber } from '../validate/whole.js';
import { type ConsumeArgs, validConsumeArgs } from './policy.js';

/**
 * How many units a {@link LeasableRateLimiter.take} asks for. The limiter grants, from what remains
 * of the key's open window (opening one when none is open, like `consume`), nothing when fewer than
 * `need` units remain, else `min(remaining, max(need, min(want, floor(remaining / divisor))))`: at
 * least what the request needs, at most `want`, and never more than a `divisor`-th of what remains,
 * so slices shrink as the window's budget runs low.
 *
 * @example
 * const ask: TakeRequest = { need: 1, want: 100, divisor: 8 };
 */
export interface TakeRequest {
  /** Units the caller needs now (a whole number >= 0); fewer remaining grants nothing. */
  readonly need: number;
  /** The most units the caller would take (a whole number >= `need`). */
  readonly want: number;
  /** Beyond `need`, grant at most `floor(remaining / divisor)` (a whole number >= 1). */
  readonly divisor: number;
}

/**
 * What {@link LeasableRateLimiter.take} answers: the units granted (counted in the window as used),
 * where the window stands after the grant, and the window's identity for a later `giveBack`.
 *
 * @example
 * const lease: RateLimitLease = { granted: 12, limit: 100, remaining: 88, resetMs: 60_000, window: 1_764_021_600_000 };
 */
export interface RateLimitLease {
  /** Units granted to the caller, 0 when fewer than `need` remained (then nothing was counted). */
  readonly granted: number;
  /** The window's limit, in units. */
  readonly limit: number;
  /** Units left in the window after the grant (0 or more). */
  readonly remaining: number;
  /** Milliseconds until the window ends, measured by the backend's clock (0 or more). */
  readonly resetMs: number;
  /**
   * The window's end in the backend's epoch milliseconds: its identity. Two takes from one window may
   * report it a millisecond or so apart (Redis reads its clock and the key's time to live one after
   * the other); two windows of a key end at least `windowMs` apart, so windows within `windowMs / 2`
   * of each other are one window (`sameWindow`), for backends and callers alike.
   */
  readonly window: number;
}

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
 * The backend primitive under `LeasedRateLimiter`, declared as a limiter's `leases` capability: take
 * a slice of a key's window in one round trip, and give back what was not spent. Both are atomic
 * per key across every process, like `consume`. `LeasableMemoryRateLimiter`, `RedisRateLimiter`
 * (one server or a Cluster), `PostgresRateLimiter`, `MysqlRateLimiter`, `SqliteRateLimiter` and
 * `DurableObjectRateLimiter` declare it; `describeRateLimiterContract` proves it.
 *
 * @example
 * const leases = capabilityOf(limiter, 'leases');
 * const lease = await leases?.take('key_1', { limit: 100, windowMs: 60_000 }, { need: 1, want: 50, divisor: 8 });
 * if (lease) await leases?.giveBack('key_1', { limit: 100, windowMs: 60_000 }, lease.window, 3);
 */
export interface LeasableRateLimiter {
  /**
   * Counts up to `ask.want` units of `keyId`'s open window as used and grants them (see
   * {@link TakeRequest} for how many). Rejects like `consume`: `InvalidInputError` naming `keyId`,
   * `limit`, `windowMs`, `need`, `want` or `divisor`; `RateLimiterUnavailableError` when the backend fails.
   */
  take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease>;
  /**
   * Uncounts `units` of `keyId`'s window `window` (a lease's `window`), never below 0; does nothing
   * when that window has ended (its units went with it) or `units` is 0.
   */
  giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void>;
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
