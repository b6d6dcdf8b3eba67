// What authenticate asks of a throttle, and what a throttle asks of a counter shared across instances.

/** An open counting window of one client bucket. */
export interface AttemptWindow {
  /** Failed attempts counted in the window so far. */
  readonly count: number;
  /** Milliseconds until the window closes and the count starts again from zero. */
  readonly resetMs: number;
}

/**
 * The answer of {@link SharedAttemptCounter.reserve}: whether the attempt may go to the store.
 *
 * @example
 * const r = await counter.reserve(bucket, 10, 60_000);
 * if (r.granted) await r.settle(lookupFailed);
 */
export interface SharedReservation extends AttemptWindow {
  /** True when the attempt was reserved; it must then be ended with `settle`. */
  readonly granted: boolean;
  /** Ends a granted reservation: `failed` turns it into a failed attempt, otherwise it is given back. */
  settle(failed: boolean): Promise<void>;
}

/**
 * A counter shared by every instance of a service (Redis: `RedisAttemptCounter` from `keygate/redis`).
 * Every method may reject; `FailedAttemptThrottle` then decides with its in-process counts.
 */
export interface SharedAttemptCounter {
  /** Adds one failure to `bucket`, opening a window of `windowMs` ms if none is open; the window after it. */
  increment(bucket: string, windowMs: number): Promise<AttemptWindow>;
  /** The open window of `bucket`, or null when there is none. */
  get(bucket: string): Promise<AttemptWindow | null>;
  /**
   * Atomically reserves one attempt for `bucket` when its failures plus the attempts reserved and not
   * yet settled are below `max`. A reservation left unsettled (a crashed process) lapses after `windowMs`.
   */
  reserve(bucket: string, max: number, windowMs: number): Promise<SharedReservation>;
}

/**
 * An attempt reserved before a store lookup (see {@link AttemptThrottle.reserve}).
 *
 * @example
 * const r = await throttle.reserve(ip);
 * if (r.waitMs === 0) r.settle(result.status === 401);
 */
export interface AttemptReservation {
  /** Milliseconds the client must wait (answered with 429 and `Retry-After`); nothing was reserved then. 0: reserved. */
  readonly waitMs: number;
  /** Ends the reservation once the lookup is decided: `failed` (a 401) counts it, otherwise it is given back. */
  settle(failed: boolean): void;
}

/**
 * What `authenticate` needs of a throttle (its `throttle` option). `FailedAttemptThrottle` is the
 * implementation; a host may bring its own.
 *
 * A request whose key must be looked up in the store first reserves an attempt, so that concurrent
 * bad keys cannot all reach the store before the first one is counted; a request decided without
 * the store (missing, malformed or cached key) is checked, and counted when it fails.
 */
export interface AttemptThrottle {
  /** Milliseconds `address` must still wait (answered with 429 and `Retry-After`), or 0. */
  check(address: string | null | undefined): number | Promise<number>;
  /** Counts one failed attempt (a 401) from `address` that needed no store lookup. */
  fail(address: string | null | undefined): void | Promise<void>;
  /** Reserves one attempt for `address` before its key is looked up in the store. */
  reserve(address: string | null | undefined): AttemptReservation | Promise<AttemptReservation>;
}
