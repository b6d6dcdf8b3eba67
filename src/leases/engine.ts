import { InvalidInputError } from '#errors';
import { inBackground, settledWithin } from '../deadline.js';
import { flag } from '../validate/flag.js';
import { validWholeNumber } from '../validate/whole.js';
import { CAPABILITIES, type Capabilities, type Capable, capabilityOf } from '../vocabulary/capabilities.js';
import type { LeaseSlice } from './slice-store.js';

/**
 * The options both leased wrappers take beside their shared part, each optional; a wrapper
 * documents its own `maxSlice` and `timeoutMs`.
 *
 * @example
 * const options: LeaseOptions = { maxSlice: 300, divisor: 8, timeoutMs: 1_000, prefetch: true };
 */
export interface LeaseOptions {
  /** The most units or credits one slice holds, beyond what the request that takes it needs. */
  maxSlice?: number;
  /**
   * A slice is at most `floor(left / divisor)` of what the shared part has left (a window's
   * remaining units, an account's balance as last seen) and at least what the request needs, so
   * slices shrink as the budget runs low.
   *
   * @default 8
   */
  divisor?: number;
  /**
   * The longest a request waits for the shared limiter or ledger, in milliseconds: its own take, and
   * another request's it waits for. A request its slice covers answers at once, with no timer; one
   * that waits longer fails like the shared part would (`RateLimiterUnavailableError`,
   * `CreditLedgerUnavailableError`). Declared as the wrapper's `deadline`, so `authenticate` adds no
   * timer of its own.
   *
   * @default twice the shared part's own deadline, and at least 500 for a limiter (1000 when it declares none), 2000 for a ledger
   */
  timeoutMs?: number;
  /**
   * Whether a slice down to half of what its take left (earlier when the last top-up saw more than
   * a quarter spent while it was in flight) is topped up in the background, so that a key far from
   * its limit, or a funded account, never waits for the shared part. Turn it off where work may not
   * outlive the request that started it (Cloudflare Workers: an isolate's I/O belongs to its request).
   *
   * @default true
   */
  prefetch?: boolean;
  /**
   * Current time in epoch milliseconds (only compared with itself).
   *
   * @default Date.now
   */
  clock?: () => number;
}

/**
 * The names of {@link LeaseOptions}, which each leased wrapper's options carry beside its own.
 *
 * @example
 * checkOptionNames(options, [...LEASE_OPTIONS, 'limiter', 'max'], 'LeasedRateLimiter');
 */
export const LEASE_OPTIONS: readonly string[] = ['maxSlice', 'divisor', 'timeoutMs', 'prefetch', 'clock'];

/**
 * What both leased wrappers share: their common options, checked with the defaults filled in; the
 * `wrapper`, `deadline` and immediate capabilities; and the background top-ups (each under
 * `timeoutMs`) that `idle()` and `close()` wait for.
 *
 * @example
 * super(options, options.limiter, [300, 500, 1_000], 'immediateLimits'); // in a wrapper's constructor
 */
export abstract class LeaseEngine<Shared extends object> implements Capable {
  /** Its `wrapper`: the shared part; its `deadline`: `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  /**
   * The most units this process holds free for one slice's owner, its slice and the next together
   * (a limiter); the most credits its slices of one account and key hold unconfirmed (a ledger).
   */
  readonly maxSlice: number;
  /** A slice is at most this fraction (1/divisor) of what the shared part has left. */
  readonly divisor: number;
  /** The longest a request waits for the shared part, in milliseconds (its `deadline`). */
  readonly timeoutMs: number;
  /** Whether slices are topped up in the background before they run dry. */
  readonly prefetch: boolean;
  /** Current time in epoch milliseconds. @internal */
  protected readonly clock: () => number;
  /** The shared limiter or ledger slices are taken from. @internal */
  protected readonly inner: Shared;
  private readonly refills = new Set<Promise<void>>();

  /**
   * Checks `clock`, `maxSlice`, `divisor`, `prefetch` and `timeoutMs`, in that order, throwing
   * `InvalidInputError` naming the first bad one. `defaults`: `maxSlice`, then the floor of
   * `timeoutMs` (twice `shared`'s own deadline, at least this) and its value when `shared` declares
   * none, in milliseconds. `immediate` names the capability the wrapper answers at once with.
   * @internal
   */
  protected constructor(
    options: LeaseOptions,
    shared: Shared,
    [maxSlice, floorMs, fallbackMs]: [number, number, number],
    immediate: 'immediateLimits' | 'immediateCredits',
  ) {
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new InvalidInputError('clock', 'clock must be a function returning epoch milliseconds');
    }
    this.maxSlice = validWholeNumber('maxSlice', options.maxSlice ?? maxSlice);
    this.divisor = validWholeNumber('divisor', options.divisor ?? 8);
    this.prefetch = flag('prefetch', options.prefetch);
    const own = capabilityOf(shared, 'deadline')?.timeoutMs;
    const ownDefault = typeof own === 'number' && own > 0 ? Math.max(2 * own, floorMs) : fallbackMs;
    this.timeoutMs = validWholeNumber('timeoutMs', options.timeoutMs ?? ownDefault);
    this.clock = options.clock ?? Date.now;
    this.inner = shared;
    this[CAPABILITIES] = { wrapper: { wrapped: shared }, deadline: { timeoutMs: this.timeoutMs }, [immediate]: this };
  }

  /**
   * Resolves once no background top-up of this process is in flight (at once when none is; each
   * settles within `timeoutMs`), so that what this process holds (`held`, `free`) counts all that
   * the shared part counted for it. Never rejects.
   *
   * @example
   * await limiter.idle();
   * limiter.held('key_1'); // 99
   */
  async idle(): Promise<void> {
    while (this.refills.size > 0) await Promise.all(this.refills);
  }

  /**
   * Takes `slice`'s next units or credits in the background: `landed` gets the answer when it comes
   * within `timeoutMs`, `late` when it comes after (to give it back); a failure is left to the
   * request that runs out. Once it settled, `slice.refilling` is cleared and `then` runs (its
   * promise, if any, counts as part of the top-up). Answers the top-up's promise, which never rejects.
   * @internal
   */
  protected refillIn<T>(
    slice: LeaseSlice,
    call: () => Promise<T>,
    landed: (value: T) => void,
    late: (value: T) => void,
    then?: () => Promise<void> | undefined,
  ): Promise<void> {
    const refilling: Promise<void> = inBackground(this.timeoutMs, call, landed, late).then(() => {
      slice.refilling = undefined;
      const more = then?.();
      const done = () => void this.refills.delete(refilling);
      if (more === undefined) return done();
      return more.then(done, done);
    });
    slice.refilling = refilling;
    this.refills.add(refilling);
    return refilling;
  }

  /** Waits for the top-ups in flight now, at most `timeoutMs` on a timer armed now. Never rejects. @internal */
  protected refilled(): Promise<void> {
    return settledWithin(Promise.all(this.refills), this.timeoutMs);
  }
}
