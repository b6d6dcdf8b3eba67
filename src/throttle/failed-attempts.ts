import { InvalidInputError } from '#errors';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import { clientBucket } from './client-bucket.js';
import { BUSY_WAIT_MS, LocalAttempts } from './local-attempts.js';
import type { AttemptReservation, AttemptThrottle, SharedAttemptCounter, SharedReservation } from './types.js';

export type {
  AttemptReservation,
  AttemptThrottle,
  AttemptWindow,
  SharedAttemptCounter,
  SharedReservation,
} from './types.js';

/** Options of {@link FailedAttemptThrottle}. */
export interface FailedAttemptThrottleOptions {
  /** Failed attempts a client bucket may make per window; the next request gets 429. @default 10 */
  max?: number;
  /** Length of the counting window, in milliseconds, from a bucket's first failure. @default 60_000 */
  windowMs?: number;
  /** Most client buckets remembered in this process (least recently used go first). @default 10_000 */
  maxClients?: number;
  /** A counter shared across instances. @default undefined (each process counts alone) */
  shared?: SharedAttemptCounter;
  /** Milliseconds to wait for `shared` before deciding with this process's counts alone. @default 100 */
  sharedTimeoutMs?: number;
  /** Told when `shared` fails or times out. @default undefined (ignored) */
  onError?: (err: unknown) => void;
  /** Current time in epoch milliseconds. @default Date.now */
  clock?: () => number;
}

/** `promise`, or a rejection after `ms`; `late` receives the answer of a promise that lost the race. */
function withTimeout<T>(promise: Promise<T>, ms: number, late?: (value: T) => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`attempt counter did not answer within ${ms} ms`));
    }, ms);
  });
  if (late)
    promise.then(
      (value) => timedOut && late(value),
      () => {},
    );
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const NOTHING_RESERVED: AttemptReservation = Object.freeze({ waitMs: 0, settle() {} });
const refused = (waitMs: number): AttemptReservation => ({ waitMs, settle() {} });

/**
 * Throttles clients that keep failing authentication: after `max` 401s from one client bucket (an
 * IPv4 address, or an IPv6 /64) within `windowMs`, every request from that bucket gets 429
 * `too_many_failed_attempts` with `Retry-After`, until the window closes. Only addresses are
 * counted, never keys, so a valid key used from another address is never locked out.
 *
 * An attempt is reserved before its key is looked up in the store and given back when the key turns
 * out valid, so however many bad keys a client sends at once, at most `max` reach the store per window.
 *
 * With `shared`, counts and reservations add up across instances. If the shared counter fails or is
 * slow, the in-process counts decide alone: a counter that is down neither locks everyone out nor
 * lifts the limit (each process still applies it). Memory is bounded by `maxClients`.
 *
 * @example
 * const throttle = new FailedAttemptThrottle({ max: 10, windowMs: 60_000 });
 * app.use(apiKeyAuth({ store, throttle }));
 */
export class FailedAttemptThrottle implements AttemptThrottle {
  readonly max: number;
  readonly windowMs: number;
  private readonly local: LocalAttempts;
  private readonly shared: SharedAttemptCounter | undefined;
  private readonly sharedTimeoutMs: number;
  private readonly onError: (err: unknown) => void;
  private readonly clock: () => number;

  constructor(options: FailedAttemptThrottleOptions = {}) {
    checkOptionNames(
      options,
      ['max', 'windowMs', 'maxClients', 'shared', 'sharedTimeoutMs', 'onError', 'clock'],
      'FailedAttemptThrottle',
    );
    this.max = validWholeNumber('max', options.max ?? 10);
    this.windowMs = validWholeNumber('windowMs', options.windowMs ?? 60_000);
    this.local = new LocalAttempts(
      this.max,
      this.windowMs,
      validWholeNumber('maxClients', options.maxClients ?? 10_000),
    );
    this.sharedTimeoutMs = validWholeNumber('sharedTimeoutMs', options.sharedTimeoutMs ?? 100);
    const shared = options.shared as Partial<SharedAttemptCounter> | undefined;
    if (
      shared !== undefined &&
      !['increment', 'get', 'reserve'].every((m) => typeof shared?.[m as 'get'] === 'function')
    ) {
      throw new InvalidInputError(
        'shared',
        'shared must have increment(bucket, windowMs), get(bucket) and reserve(bucket, max, windowMs)',
      );
    }
    this.shared = options.shared;
    this.onError = options.onError ?? (() => {});
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Milliseconds `address` must wait, or 0. Answers from memory when this process already knows the
   * bucket is over the limit; otherwise asks the shared counter, if any.
   */
  check(address: string | null | undefined): number | Promise<number> {
    const bucket = clientBucket(address);
    if (bucket === undefined) return 0;
    const now = this.clock();
    const wait = this.local.waitMs(bucket, now);
    if (wait > 0 || this.shared === undefined) return wait;
    return withTimeout(this.shared.get(bucket), this.sharedTimeoutMs).then(
      (window) => {
        if (window === null || window.count < this.max) return 0;
        // Remembered here, so that a flood from a blocked bucket costs no more round trips.
        this.local.adopt(bucket, now, window);
        return this.local.waitMs(bucket, now);
      },
      (err) => {
        this.onError(err);
        return 0;
      },
    );
  }

  /**
   * Reserves an attempt for `address` before a store lookup: in this process first (synchronously, so
   * concurrent requests see each other), then in the shared counter. Never rejects.
   */
  reserve(address: string | null | undefined): AttemptReservation | Promise<AttemptReservation> {
    const bucket = clientBucket(address);
    if (bucket === undefined) return NOTHING_RESERVED;
    const wait = this.local.reserve(bucket, this.clock());
    if (wait > 0) return refused(wait);
    const settleHere = (failed: boolean) => this.local.settle(bucket, this.clock(), failed);
    if (this.shared === undefined) return { waitMs: 0, settle: settleHere };
    const late = (r: SharedReservation) => r.granted && r.settle(false).catch(this.onError);
    return withTimeout(this.shared.reserve(bucket, this.max, this.windowMs), this.sharedTimeoutMs, late).then(
      (r) => this.sharedAnswer(bucket, r, settleHere),
      (err) => {
        this.onError(err);
        // Decided here alone; a failure is still told to the shared counter, as fail() does.
        const settle = (failed: boolean) => {
          settleHere(failed);
          if (failed) this.countShared(bucket);
        };
        return { waitMs: 0, settle };
      },
    );
  }

  private sharedAnswer(
    bucket: string,
    r: SharedReservation,
    settleHere: (failed: boolean) => void,
  ): AttemptReservation {
    if (r.granted) {
      return {
        waitMs: 0,
        settle: (failed) => {
          settleHere(failed);
          r.settle(failed).catch(this.onError);
        },
      };
    }
    settleHere(false);
    const now = this.clock();
    if (r.count < this.max) return refused(BUSY_WAIT_MS);
    this.local.adopt(bucket, now, r);
    return refused(Math.max(1, this.local.waitMs(bucket, now)));
  }

  /** Counts one failed attempt from `address`, here and in the shared counter. Never rejects. */
  fail(address: string | null | undefined): void | Promise<void> {
    const bucket = clientBucket(address);
    if (bucket === undefined) return;
    this.local.fail(bucket, this.clock());
    return this.countShared(bucket);
  }

  private countShared(bucket: string): Promise<void> | undefined {
    if (this.shared === undefined) return;
    return withTimeout(this.shared.increment(bucket, this.windowMs), this.sharedTimeoutMs).then(
      (window) => this.local.adopt(bucket, this.clock(), window),
      (err) => this.onError(err),
    );
  }

  /** Forgets every count held in this process (not the shared counter's). */
  clear(): void {
    this.local.clear();
  }
}
