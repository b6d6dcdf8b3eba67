import type { RateLimit } from '../types.js';

/**
 * What a {@link RateLimiter} answered for one request.
 *
 * @example
 * const decision: RateLimitDecision = { allowed: true, limit: 100, remaining: 99, resetMs: 60_000 };
 */
export interface RateLimitDecision {
  /** The request's cost was counted; false when it exceeded what remained (then nothing was counted). */
  readonly allowed: boolean;
  /** The window's limit, in units. */
  readonly limit: number;
  /** Units left in the current window after this decision (0 or more). */
  readonly remaining: number;
  /** Milliseconds until the current window ends and the key's next request opens a fresh one (0 or more). */
  readonly resetMs: number;
}

/**
 * Counts units per key in fixed windows, each opened by the key's first request after the previous
 * window ended and lasting `windowMs`. The contract every implementation keeps: within any window of
 * `windowMs` that starts at a key's first request, no more than `limit` units are allowed, counted
 * exactly across every process sharing the limiter, concurrency included. A request whose `cost`
 * exceeds what remains is refused and counts nothing. A span of `windowMs` that straddles two
 * windows may hold up to `2 * limit` units (the end of one window and the start of the next).
 *
 * Implementations: `MemoryRateLimiter` (one process), `RedisRateLimiter` (`keygate/redis`),
 * `PostgresRateLimiter` (`keygate/postgres`). A shared one rejects with
 * `RateLimiterUnavailableError` when its backend fails or does not answer within its `timeout`.
 *
 * @example
 * const decision = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 * if (!decision.allowed) return tooManyRequests(decision.resetMs);
 */
export interface RateLimiter {
  /**
   * Counts `cost` units (a whole number >= 0) against `keyId` under `limit`. A cost of `0` counts
   * nothing and is always allowed (like any request, it opens a window when none is open), so it
   * reads the state. Rejects with `InvalidInputError` naming `keyId`, `limit`, `windowMs` or `cost`.
   */
  consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision>;
}

/**
 * Where a limited key stands after a request that `authenticate` counted: the decision, plus the
 * window it applies to. Carried as `result.rateLimit` by the results of a limited key (200 and 429),
 * so that adapters can write the `RateLimit-Policy` and `RateLimit` header fields.
 *
 * @example
 * const result = await authenticate(request, store, { rateLimit: { limiter } });
 * if (result.rateLimit) console.log(`${result.rateLimit.remaining} of ${result.rateLimit.limit} left`);
 */
export interface RateLimitState {
  /** The window's limit, in units. */
  readonly limit: number;
  /** Units left in the current window (0 or more). */
  readonly remaining: number;
  /** Milliseconds until the current window ends (0 or more). */
  readonly resetMs: number;
  /** Length of the key's window in milliseconds (its own `rateLimit.windowMs`, or the default's). */
  readonly windowMs: number;
  /**
   * With several limits (a key's named limits, an account's limits): the name of the one these
   * fields describe, the most restrictive: the one that refused, else the one with the fewest units
   * left. Absent for a key held to one unnamed limit.
   */
  readonly name?: string;
  /**
   * With several limits: each limit this request was counted against, in the order they were
   * counted (shortest window first; a refusal stops the count, so later ones are not listed). Absent
   * for a key held to one unnamed limit.
   */
  readonly policies?: readonly RateLimitPolicyState[];
}

/**
 * Where one of several limits stands after a request: its name, whose it is (the key's own, or the
 * account's shared by all its keys of the same mode), and its state.
 *
 * @example
 * const burst: RateLimitPolicyState = { name: 'burst', scope: 'key', limit: 10, remaining: 9, resetMs: 800, windowMs: 1_000 };
 */
export interface RateLimitPolicyState {
  /** The limit's name, as the header fields report it. */
  readonly name: string;
  /** `key`: the key's own (or the default) limit; `account`: a limit shared by every key of the account in the same mode. */
  readonly scope: 'key' | 'account';
  /** The window's limit, in units. */
  readonly limit: number;
  /** Units left in the current window (0 or more). */
  readonly remaining: number;
  /** Milliseconds until the current window ends (0 or more). */
  readonly resetMs: number;
  /** Length of the window in milliseconds. */
  readonly windowMs: number;
}

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
