import type { RateLimit, RateLimitDecision, RateLimiter } from 'keygate';
import {
  CAPABILITIES,
  type Capabilities,
  type Capable,
  type LeasableRateLimiter,
  type RateLimitLease,
  type TakeRequest,
  validConsumeArgs,
  validGiveBackArgs,
  validTakeArgs,
  validTimeoutMs,
  withLimiterDeadline,
} from 'keygate/store-kit';
import { validNamespace } from './namespace.js';
import { callObject } from './protocol.js';
import type { DurableObjectNamespaceLike } from './workers-types.js';

/**
 * Options of {@link DurableObjectRateLimiter}.
 *
 * @example
 * const options: DurableObjectRateLimiterOptions = { namespace: env.KEYGATE_LIMITS, timeoutMs: 1_000 };
 */
export interface DurableObjectRateLimiterOptions {
  /** The binding of the `KeygateRateLimitObject` class (`env.KEYGATE_LIMITS`). */
  namespace: DurableObjectNamespaceLike;
  /**
   * Milliseconds a `consume` waits for its object before it rejects with
   * `RateLimiterUnavailableError` (503 through `authenticate`); declared as the limiter's `deadline`.
   *
   * @default 1000
   */
  timeoutMs?: number;
}

/**
 * A rate limiter on Durable Objects, exact everywhere: each key is counted by one
 * `KeygateRateLimitObject` (`namespace.idFromName(keyId)`), which handles one request at a time, so
 * no two requests of a key, from any colo or isolate, are counted at once. One round trip to the
 * key's object per `consume`. Arguments are checked here (`InvalidInputError`, nothing sent); an
 * object that fails, throws or does not answer within `timeoutMs` makes `consume` reject with
 * `RateLimiterUnavailableError`: fail closed. It declares the `leases` capability, so a
 * `LeasedRateLimiter` in each isolate can take slices of a key's window from the key's object (one
 * round trip per slice) and spend them locally.
 *
 * @example
 * const limiter = new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS });
 * const result = await authenticate(request, store, { rateLimit: { limiter, default: { limit: 100, windowMs: 60_000 } } });
 */
export class DurableObjectRateLimiter implements RateLimiter, LeasableRateLimiter, Capable {
  /** Its `deadline` (each call settles within `timeoutMs`) and `leases` (`take`, `giveBack`). */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a `consume` waits for its object. */
  readonly timeoutMs: number;
  private readonly namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectRateLimiterOptions) {
    this.namespace = validNamespace(options?.namespace);
    this.timeoutMs = validTimeoutMs(options.timeoutMs, 1_000);
    this[CAPABILITIES] = { deadline: this, leases: this };
  }

  /**
   * Counts `cost` units against `keyId` in the key's object.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    const args = validConsumeArgs(keyId, limit, cost);
    return withLimiterDeadline('DurableObjectRateLimiter', this.timeoutMs, () =>
      callObject<RateLimitDecision>(this.namespace, this.namespace.idFromName(args.keyId), 'consume', [
        args.keyId,
        { limit: args.limit, windowMs: args.windowMs },
        args.cost,
      ]),
    );
  }

  /**
   * Grants a slice of `keyId`'s open window in the key's object (the `leases` capability; see
   * `TakeRequest`). The window's identity is its end by the object's clock.
   *
   * @example
   * await limiter.take('key_1', { limit: 100, windowMs: 60_000 }, { need: 1, want: 50, divisor: 8 }); // granted 12
   */
  async take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease> {
    const args = validTakeArgs(keyId, limit, ask);
    return withLimiterDeadline('DurableObjectRateLimiter', this.timeoutMs, () =>
      callObject<RateLimitLease>(this.namespace, this.namespace.idFromName(args.keyId), 'take', [
        args.keyId,
        { limit: args.limit, windowMs: args.windowMs },
        { need: args.cost, want: args.want, divisor: args.divisor },
      ]),
    );
  }

  /**
   * Uncounts `units` of `keyId`'s window `window` in the key's object (the `leases` capability);
   * nothing once that window has ended.
   *
   * @example
   * await limiter.giveBack('key_1', { limit: 100, windowMs: 60_000 }, lease.window, 5);
   */
  async giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void> {
    const args = validGiveBackArgs(keyId, limit, window, units);
    if (args.cost === 0) return;
    await withLimiterDeadline('DurableObjectRateLimiter', this.timeoutMs, () =>
      callObject<null>(this.namespace, this.namespace.idFromName(args.keyId), 'giveBack', [
        args.keyId,
        { limit: args.limit, windowMs: args.windowMs },
        window,
        args.cost,
      ]),
    );
  }
}
