import type { RateLimit, RateLimitDecision, RateLimiter } from 'keygate';
import {
  CAPABILITIES,
  type Capabilities,
  type Capable,
  validConsumeArgs,
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
 * `RateLimiterUnavailableError`: fail closed.
 *
 * @example
 * const limiter = new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS });
 * const result = await authenticate(request, store, { rateLimit: { limiter, default: { limit: 100, windowMs: 60_000 } } });
 */
export class DurableObjectRateLimiter implements RateLimiter, Capable {
  /** Its `deadline`: each `consume` settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a `consume` waits for its object. */
  readonly timeoutMs: number;
  private readonly namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectRateLimiterOptions) {
    this.namespace = validNamespace(options?.namespace);
    this.timeoutMs = validTimeoutMs(options.timeoutMs, 1_000);
    this[CAPABILITIES] = { deadline: this };
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
}
