import { InvalidInputError } from '#errors';
import type { EventHook } from '../events.js';
import { quote } from '../redact/describe.js';
import type { KeyRateLimit, PublicKey } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { capabilityOf, type ImmediateLimiter } from '../vocabulary/capabilities.js';
import type { RateLimiter } from '../vocabulary/rate-limiter.js';
import type { AuthRequest } from '../vocabulary/result.js';
import { checkKeyRateLimit } from './named.js';

/**
 * The `rateLimit` option of `authenticate` and of every adapter: per-key rate limiting (check row 9).
 * A request that passed every other check consumes `cost` units of its key's limit: the key's own
 * `rateLimit`, else `default`; a key with neither is not limited. `Request` is what a `cost`
 * function receives: the `AuthRequest` for `authenticate`, the framework's own request in an adapter.
 *
 * @example
 * const rateLimit: RateLimitOptions = {
 *   limiter: new RedisRateLimiter({ client }),
 *   default: { limit: 100, windowMs: 60_000 },
 *   onEvent: (event) => console.warn(event.type, event.limiter),
 * };
 * await authenticate({ headers, ip }, store, { rateLimit });
 */
export interface RateLimitOptions<Request = AuthRequest> {
  /** Counts the units: `MemoryRateLimiter` (one process), `RedisRateLimiter`, `PostgresRateLimiter`, or your own. */
  limiter: RateLimiter;
  /**
   * The limit of keys that have no `rateLimit` of their own: one `{ limit, windowMs }`, or up to 10
   * named ones. A key's own limit always wins.
   *
   * @default undefined (keys without their own limit are not limited)
   */
  default?: KeyRateLimit | null;
  /**
   * Limits shared by all keys of an account: every key of the account in the same mode counts
   * against one budget (an account with ten keys gets its plan once, not ten times; `mk_test_` keys
   * have a budget of their own, apart from `mk_live_` ones). One `{ limit, windowMs }` (reported as
   * `"account"`), up to 10 named ones, or a function of the key (its `accountId`, `mode`,
   * `metadata`) that returns them, or null for none: a plan lookup. The function is called for
   * every request that passed the other checks, so it should answer from memory; what it returns
   * is checked once per object returned, and a function that throws or returns anything else fails
   * closed (503 `rate_limiter_unavailable`). They apply beside the key's own limits, the most
   * restrictive deciding.
   *
   * @default undefined (no account limits)
   * @example
   * const plans = { free: { limit: 1_000, windowMs: 86_400_000 }, pro: null };
   * const rateLimit = { limiter, account: (key: PublicKey) => plans[key.metadata.plan as 'free' | 'pro'] ?? plans.free };
   */
  account?: KeyRateLimit | ((key: PublicKey) => KeyRateLimit | null | undefined) | null;
  /**
   * Units one request consumes: a whole number >= 0, or a function of the request that returns one
   * (a batch route: the batch size). Called only for a request that passed every other check. A
   * function that throws or returns anything else fails closed: 503 `rate_limiter_unavailable`.
   *
   * @default 1
   */
  cost?: number | ((request: Request) => number);
  /**
   * What a request gets while a shared limiter fails or times out: `'fallback'` counts it in this
   * process with the key's limit (and emits `ratelimit.degraded` once per episode); `'deny'` answers
   * 503 `rate_limiter_unavailable`.
   *
   * @default 'fallback'
   */
  onLimiterError?: 'fallback' | 'deny';
  /** Receives `ratelimit.degraded` when a shared limiter starts failing. Its failures never affect a request. @default undefined */
  onEvent?: EventHook;
}

/**
 * The `rateLimit` option after validation: plain settings. The limiter that answers (the memory
 * limiter itself, or a shared one behind its per-process fallback) is made on first use, by the
 * request path (`fallbacks.ts`), so that validating options alone (as adapters do at
 * construction, and `keygate/adapter-kit` does with its own copy of this module) builds nothing.
 *
 * @example
 * const { rateLimit } = resolveAuthOptions({ rateLimit: { limiter: new MemoryRateLimiter() } });
 * rateLimit?.onLimiterError; // 'fallback'
 */
export interface ResolvedRateLimit {
  readonly limiter: RateLimiter;
  readonly default: KeyRateLimit | null;
  /** Account limits: checked ones, or the function that looks them up; null: none. */
  readonly account: KeyRateLimit | ((key: PublicKey) => KeyRateLimit | null | undefined) | null;
  readonly cost: number | ((request: AuthRequest) => number);
  readonly onLimiterError: 'fallback' | 'deny';
  readonly onEvent: EventHook | undefined;
  /** Milliseconds after which a limiter with no `deadline` of its own counts as failing; 0: none. */
  readonly guardMs: number;
  /** Set by the request path on first use. */
  answering?: Answering;
}

/**
 * Who answers row 9 for a `rateLimit` option: `now` answers at once when it can (a
 * `MemoryRateLimiter` always, a `LeasedRateLimiter` from its slice), `limiter` otherwise.
 *
 * @example
 * const { now, limiter } = answering(o.rateLimit);
 * const decision = now?.consumeNow(key.id, policy, 1) ?? (await limiter.consume(key.id, policy, 1));
 */
export interface Answering {
  readonly now: ImmediateLimiter | undefined;
  readonly limiter: RateLimiter;
}

const FIELDS = ['limiter', 'default', 'account', 'cost', 'onLimiterError', 'onEvent'];

function refuse(member: string, message: string): never {
  throw new InvalidInputError(`rateLimit.${member}`, `rateLimit.${member} ${message}`);
}

// A limiter that declares a `deadline` no later than the authentication timeout (keygate's shared
// limiters do) needs no second timer; any other is guarded by the authentication `timeoutMs`, so it
// can never hang a request.
function guardFor(limiter: RateLimiter, timeoutMs: number): number {
  const own = capabilityOf(limiter, 'deadline')?.timeoutMs;
  return typeof own === 'number' && own > 0 && (timeoutMs === 0 || own <= timeoutMs) ? 0 : timeoutMs;
}

/**
 * Validates the `rateLimit` option once; throws `InvalidInputError` naming the member at fault
 * (`rateLimit.limiter`, `rateLimit.default.limit`, `rateLimit.cost`, ...). `timeoutMs` is the
 * authentication timeout, which also bounds a limiter that does not time out by itself.
 *
 * @example
 * resolveRateLimit({ limiter: new MemoryRateLimiter(), default: { limit: 10, windowMs: 1000 } }, 2000);
 */
export function resolveRateLimit(value: unknown, timeoutMs: number): ResolvedRateLimit | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError('rateLimit', 'rateLimit must be an object { limiter, default?, cost?, ... } or null');
  }
  const o = value as Partial<RateLimitOptions>;
  checkOptionNames(o, FIELDS, 'rateLimit', 'rateLimit');
  const { limiter, cost = 1, onLimiterError = 'fallback', onEvent } = o;
  if (typeof limiter?.consume !== 'function') refuse('limiter', 'must have consume(keyId, limit, cost)');
  const fallback = o.default == null ? null : checkKeyRateLimit(o.default, 'rateLimit.default');
  const account =
    o.account == null || typeof o.account === 'function'
      ? (o.account ?? null)
      : checkKeyRateLimit(o.account, 'rateLimit.account');
  if (typeof cost !== 'function' && !(typeof cost === 'number' && Number.isSafeInteger(cost) && cost >= 0)) {
    refuse('cost', `must be a whole number >= 0 or a function of the request, got ${quote(cost)}`);
  }
  if (onLimiterError !== 'fallback' && onLimiterError !== 'deny') {
    refuse('onLimiterError', `must be "fallback" or "deny", got ${quote(onLimiterError)}`);
  }
  if (onEvent !== undefined && typeof onEvent !== 'function') refuse('onEvent', 'must be a function');
  return {
    limiter: limiter as RateLimiter,
    default: fallback,
    account,
    cost: cost as ResolvedRateLimit['cost'],
    onLimiterError,
    onEvent,
    guardMs: guardFor(limiter as RateLimiter, timeoutMs),
  };
}
