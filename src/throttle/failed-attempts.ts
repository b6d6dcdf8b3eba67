import { LRUCache } from 'lru-cache';
import { InvalidInputError } from '../errors.js';
import { clientBucket } from './client-bucket.js';

/** An open counting window of one client bucket. */
export interface AttemptWindow {
  /** Failed attempts counted in the window so far. */
  readonly count: number;
  /** Milliseconds until the window closes and the count starts again from zero. */
  readonly resetIn: number;
}

/**
 * A counter shared by every instance of a service (Redis: `RedisAttemptCounter` from `keygate/redis`).
 * Both methods may reject; {@link FailedAttemptThrottle} then decides with its in-process counts.
 */
export interface SharedAttemptCounter {
  /** Adds one failure to `bucket`, opening a window of `window` ms if none is open; the window after it. */
  increment(bucket: string, window: number): Promise<AttemptWindow>;
  /** The open window of `bucket`, or null when there is none. */
  get(bucket: string): Promise<AttemptWindow | null>;
}

/**
 * What `authenticate` needs of a throttle (its `throttle` option). {@link FailedAttemptThrottle} is
 * the implementation; a host may bring its own.
 */
export interface AttemptThrottle {
  /** Seconds `address` must still wait (answered with 429 and `Retry-After`), or 0. */
  check(address: string | null | undefined): number | Promise<number>;
  /** Counts one failed attempt (a 401) from `address`. */
  fail(address: string | null | undefined): void | Promise<void>;
}

/** Options of {@link FailedAttemptThrottle}. */
export interface FailedAttemptThrottleOptions {
  /** Failed attempts a client bucket may make per window; the next request gets 429. Default `10`. */
  max?: number;
  /** Length of the counting window, in milliseconds, from a bucket's first failure. Default `60_000`. */
  window?: number;
  /** Most client buckets remembered in this process (least recently used go first). Default `10_000`. */
  maxClients?: number;
  /** A counter shared across instances. Default: none, each process counts alone. */
  shared?: SharedAttemptCounter;
  /** Milliseconds to wait for `shared` before deciding with this process's counts alone. Default `100`. */
  sharedTimeout?: number;
  /** Told when `shared` fails or times out. Default: ignore. */
  onError?: (err: unknown) => void;
  /** Current time in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

interface Entry {
  count: number;
  resetAt: number;
}

function positiveInteger(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidInputError(field, `${field} must be a whole number >= 1, got ${String(value)}`);
  }
  return value;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`attempt counter did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Throttles clients that keep failing authentication: after `max` 401s from one client bucket (an
 * IPv4 address, or an IPv6 /64) within `window`, every request from that bucket gets 429
 * `too_many_failed_attempts` with `Retry-After`, until the window closes. Only addresses are
 * counted, never keys, so a valid key used from another address is never locked out.
 *
 * With `shared`, counts add up across instances. If the shared counter fails or is slow, the
 * in-process counts decide alone: a counter that is down neither locks everyone out nor lifts the
 * limit (each process still applies it). Memory is bounded by `maxClients`.
 *
 * @example
 * const throttle = new FailedAttemptThrottle({ max: 10, window: 60_000 });
 * app.use(apiKeyAuth({ store, throttle }));
 */
export class FailedAttemptThrottle implements AttemptThrottle {
  readonly max: number;
  readonly window: number;
  private readonly entries: LRUCache<string, Entry>;
  private readonly shared: SharedAttemptCounter | undefined;
  private readonly sharedTimeout: number;
  private readonly onError: (err: unknown) => void;
  private readonly now: () => number;

  constructor(options: FailedAttemptThrottleOptions = {}) {
    this.max = positiveInteger('max', options.max ?? 10);
    this.window = positiveInteger('window', options.window ?? 60_000);
    this.entries = new LRUCache({ max: positiveInteger('maxClients', options.maxClients ?? 10_000) });
    this.sharedTimeout = positiveInteger('sharedTimeout', options.sharedTimeout ?? 100);
    const shared = options.shared;
    if (shared !== undefined && (typeof shared?.increment !== 'function' || typeof shared.get !== 'function')) {
      throw new InvalidInputError('shared', 'shared must have increment(bucket, window) and get(bucket)');
    }
    this.shared = shared;
    this.onError = options.onError ?? (() => {});
    this.now = options.now ?? Date.now;
  }

  /** Seconds until the window of an entry at or over the limit closes, or 0. */
  private waitOf(entry: Entry | undefined, now: number): number {
    if (entry === undefined || entry.resetAt <= now || entry.count < this.max) return 0;
    return Math.max(1, Math.ceil((entry.resetAt - now) / 1000));
  }

  /**
   * Seconds `address` must wait, or 0. Answers from memory when this process already knows the
   * bucket is over the limit; otherwise asks the shared counter, if any.
   */
  check(address: string | null | undefined): number | Promise<number> {
    const bucket = clientBucket(address);
    if (bucket === undefined) return 0;
    const now = this.now();
    const wait = this.waitOf(this.entries.get(bucket), now);
    if (wait > 0 || this.shared === undefined) return wait;
    return withTimeout(this.shared.get(bucket), this.sharedTimeout).then(
      (window) => {
        if (window === null || window.count < this.max) return 0;
        // Remembered here, so that a flood from a blocked bucket costs no more round trips.
        const entry = { count: window.count, resetAt: now + window.resetIn };
        this.entries.set(bucket, entry);
        return this.waitOf(entry, now);
      },
      (err) => {
        this.onError(err);
        return 0;
      },
    );
  }

  /** Counts one failed attempt from `address`, here and in the shared counter. Never rejects. */
  fail(address: string | null | undefined): void | Promise<void> {
    const bucket = clientBucket(address);
    if (bucket === undefined) return;
    const now = this.now();
    let entry = this.entries.get(bucket);
    if (entry === undefined || entry.resetAt <= now) {
      entry = { count: 0, resetAt: now + this.window };
      this.entries.set(bucket, entry);
    }
    entry.count++;
    if (this.shared === undefined) return;
    const local = entry;
    return withTimeout(this.shared.increment(bucket, this.window), this.sharedTimeout).then(
      (window) => {
        // The shared count includes this process's; it wins when it is ahead.
        if (window.count >= local.count) {
          local.count = window.count;
          local.resetAt = now + window.resetIn;
        }
      },
      (err) => this.onError(err),
    );
  }

  /** Forgets every count held in this process (not the shared counter's). */
  clear(): void {
    this.entries.clear();
  }
}
