import { withLimiterDeadline } from '../rate-limit/deadline.js';
import { grantOf, type TakeArgs, validGiveBackArgs, validTakeArgs } from '../rate-limit/lease-types.js';
import { type ConsumeArgs, validConsumeArgs } from '../rate-limit/policy.js';
import type { RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { validTimeoutMs } from '../validate/timeout.js';
import { CAPABILITIES, type Capabilities, type Capable } from '../vocabulary/capabilities.js';
import type {
  LeasableRateLimiter,
  RateLimitDecision,
  RateLimiter,
  RateLimitLease,
  TakeRequest,
} from '../vocabulary/rate-limiter.js';

/**
 * What every shared rate limiter does the same way, whatever counts underneath: it checks each
 * call's arguments (`InvalidInputError`, nothing sent), bounds each call by `timeoutMs`
 * (`RateLimiterUnavailableError`, with the backend's error as `cause`, when the backend fails or
 * does not answer in time), and declares its `deadline` and `leases` capabilities. A subclass only
 * counts: {@link BackendRateLimiter.count}, {@link BackendRateLimiter.grant} and
 * {@link BackendRateLimiter.uncount}, each given arguments already checked. A consume that timed out
 * may still have been counted by the backend; a take that timed out and is answered later is given
 * back through `uncount`. For authors of limiters over other backends.
 *
 * @example
 * class MyRateLimiter extends BackendRateLimiter {
 *   constructor(options: { client: MyClient; timeoutMs?: number }) {
 *     super('MyRateLimiter', options.timeoutMs, 250, { options, names: ['client', 'timeoutMs'] });
 *   }
 *   protected async count(args: ConsumeArgs) { ... }
 *   protected async grant(args: TakeArgs) { ... }
 *   protected async uncount(args: ConsumeArgs, window: number) { ... }
 * }
 */
export abstract class BackendRateLimiter implements RateLimiter, LeasableRateLimiter, Capable {
  /** Its `deadline` (each call settles within `timeoutMs`) and `leases` (`take`, `giveBack`). */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a call may take before it rejects. */
  readonly timeoutMs: number;
  // The class name errors carry: not `constructor.name`, which a minifier may rename.
  private readonly limiterName: string;

  /**
   * @param name The subclass's name, as its errors carry it (`'RedisRateLimiter'`).
   * @param timeoutMs The `timeoutMs` option as given, checked here (`validTimeoutMs`).
   * @param defaultMs Milliseconds a call may take when `timeoutMs` is absent.
   * @param given The subclass's options as given and every member it takes: a member `names` does not
   * list is refused first (`InvalidInputError`, reason `unknown_option`; see `checkOptionNames`), so
   * the subclass builds nothing for options it would ignore.
   */
  protected constructor(
    name: string,
    timeoutMs: unknown,
    defaultMs: number,
    given?: { options: unknown; names: readonly string[] },
  ) {
    if (given) checkOptionNames(given.options, given.names, name);
    this.limiterName = name;
    this.timeoutMs = validTimeoutMs(timeoutMs, defaultMs);
    this[CAPABILITIES] = { deadline: this, leases: this };
  }

  /**
   * Counts `cost` units against `keyId`. Rejects with `InvalidInputError` for bad arguments and with
   * `RateLimiterUnavailableError` when the backend fails or does not answer within `timeoutMs`.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    const args = validConsumeArgs(keyId, limit, cost);
    return this.bounded(() => this.count(args));
  }

  /**
   * Grants a slice of `keyId`'s open window (the `leases` capability; see `TakeRequest`): at least
   * `need` units or none, at most `want`. Rejects like `consume`. A take that timed out and is
   * answered later (a stalled connection delivers; node-redis sends what it queued while
   * disconnected once it reconnects) was counted for nobody: its grant is given back the moment the
   * answer comes (`uncount`, under the same deadline, once). Only a take whose answer is lost with its
   * connection stays counted, until its window ends.
   *
   * @example
   * await limiter.take('key_1', { limit: 100, windowMs: 60_000 }, { need: 1, want: 50, divisor: 8 }); // granted 12
   */
  async take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease> {
    const args = validTakeArgs(keyId, limit, ask);
    return this.bounded(
      () => this.grant(args),
      (lease) => this.giveBackLate(args, lease),
    );
  }

  /**
   * Uncounts `units` of `keyId`'s window `window` (the `leases` capability), never below 0; nothing
   * once that window has ended, and nothing is sent for 0 units.
   *
   * @example
   * await limiter.giveBack('key_1', { limit: 100, windowMs: 60_000 }, lease.window, 5);
   */
  async giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void> {
    const args = validGiveBackArgs(keyId, limit, window, units);
    if (args.cost === 0) return;
    await this.bounded(() => this.uncount(args, window));
  }

  /**
   * Counts `args.cost` units in the backend, atomically per key: the decision of `consume`.
   *
   * @example
   * protected async count(args: ConsumeArgs) { return this.decision(args.limit, used, allowed, resetMs); }
   */
  protected abstract count(args: ConsumeArgs): Promise<RateLimitDecision>;

  /**
   * Grants a slice of the key's open window in the backend (opening one when none is open), by
   * `grantOf`'s rule: the lease of `take`.
   *
   * @example
   * protected async grant(args: TakeArgs) { return this.lease(args.limit, granted, usedAfter, resetMs, windowEnd); }
   */
  protected abstract grant(args: TakeArgs): Promise<RateLimitLease>;

  /**
   * Uncounts `args.cost` units when the key's open window is `window` (`sameWindow`); nothing else.
   *
   * @example
   * protected async uncount(args: ConsumeArgs, window: number) { await this.backend.decrement(args.keyId, args.cost, window); }
   */
  protected abstract uncount(args: ConsumeArgs, window: number): Promise<unknown>;

  /**
   * Runs `work` under this limiter's deadline (`withLimiterDeadline` with its name and `timeoutMs`);
   * an answer that comes after the deadline goes to `late`, if given.
   *
   * @example
   * prune() { return this.bounded(() => this.backend.deleteEnded()); }
   */
  protected bounded<T>(work: () => Promise<T>, late?: (value: T) => void): Promise<T> {
    return withLimiterDeadline(this.limiterName, this.timeoutMs, work, late);
  }

  // The grant of a take answered after its deadline: its caller was refused, so nobody spends it.
  private giveBackLate(args: TakeArgs, lease: RateLimitLease): void {
    if (!(lease.granted > 0)) return;
    const back = { keyId: args.keyId, limit: args.limit, windowMs: args.windowMs, cost: lease.granted };
    void this.bounded(() => this.uncount(back, lease.window)).catch(() => {});
  }

  /**
   * The decision of a window in which `used` units are counted (after this request), `resetMs`
   * before it ends; both bounds at 0.
   *
   * @example
   * this.decision(10, 1, true, 999); // { allowed: true, limit: 10, remaining: 9, resetMs: 999 }
   */
  protected decision(limit: number, used: number, allowed: boolean, resetMs: number): RateLimitDecision {
    return { allowed, limit, remaining: Math.max(0, limit - used), resetMs: Math.max(0, resetMs) };
  }

  /**
   * The units a take grants when `used` units of the window are counted: `grantOf` the remaining
   * units, for backends that read the window and count the grant in one transaction.
   *
   * @example
   * this.grantFor({ keyId: 'key_1', limit: 100, windowMs: 60_000, cost: 1, want: 50, divisor: 8 }, 0); // 12
   */
  protected grantFor(args: TakeArgs, used: number): number {
    return grantOf(Math.max(0, args.limit - used), { need: args.cost, want: args.want, divisor: args.divisor });
  }

  /**
   * The lease of a take that granted `granted` units of the window ending at `window`, in which
   * `used` units are counted (the grant included), `resetMs` before it ends.
   *
   * @example
   * this.lease(100, 12, 12, 60_000, 1_764_021_600_000); // { granted: 12, limit: 100, remaining: 88, resetMs: 60_000, window: ... }
   */
  protected lease(limit: number, granted: number, used: number, resetMs: number, window: number): RateLimitLease {
    return { granted, limit, remaining: Math.max(0, limit - used), resetMs: Math.max(0, resetMs), window };
  }
}
