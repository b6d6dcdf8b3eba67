import type { RateLimitDecision } from 'keygate';
import { BackendRateLimiter, type ConsumeArgs, type RateLimitLease, type TakeArgs } from 'keygate/store-kit';
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

// Every member of {@link DurableObjectRateLimiterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ namespace: true, timeoutMs: true } satisfies Record<
  keyof DurableObjectRateLimiterOptions,
  true
>);

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
export class DurableObjectRateLimiter extends BackendRateLimiter {
  private readonly namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectRateLimiterOptions) {
    const namespace = validNamespace(options?.namespace);
    super('DurableObjectRateLimiter', options.timeoutMs, 1_000, { options, names: OPTION_NAMES });
    this.namespace = namespace;
  }

  protected count(args: ConsumeArgs): Promise<RateLimitDecision> {
    return this.send(args, 'consume', args.cost);
  }

  // The window's identity is its end by the object's clock.
  protected grant(args: TakeArgs): Promise<RateLimitLease> {
    return this.send(args, 'take', { need: args.cost, want: args.want, divisor: args.divisor });
  }

  protected uncount(args: ConsumeArgs, window: number): Promise<unknown> {
    return this.send(args, 'giveBack', window, args.cost);
  }

  /** One call of the key's object: the key, its limit, then `rest`. */
  private send<T>(args: ConsumeArgs, method: string, ...rest: unknown[]): Promise<T> {
    const limit = { limit: args.limit, windowMs: args.windowMs };
    return callObject<T>(this.namespace, this.namespace.idFromName(args.keyId), method, [args.keyId, limit, ...rest]);
  }
}
