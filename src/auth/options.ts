import { InvalidInputError } from '#errors';
import { type CreditOptions, type ResolvedCredits, resolveCredits } from '../credits/options.js';
import { assertPrefix, DEFAULT_PREFIX } from '../key/format.js';
import { type RateLimitOptions, type ResolvedRateLimit, resolveRateLimit } from '../rate-limit/options.js';
import { quote } from '../redact/describe.js';
import { createTelemetry, type Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import type { AttemptThrottle } from '../throttle/types.js';
import { checkOptionNames } from '../validate/options.js';
import type { AuthRequest, AuthResult } from '../vocabulary/result.js';
import type { KeySource } from './read-key.js';

/** Options of `authenticate`. Build them once (per middleware or route), not per request. */
export interface AuthenticateOptions {
  /** Permissions the route requires, all of them. @default [] */
  permissions?: readonly string[];
  /** Header that carries the key, matched case-insensitively. @default 'x-api-key' */
  header?: string;
  /**
   * Where the key is read: `'header'` (the `header` option), `'bearer'` (`Authorization: Bearer <key>`,
   * the scheme case-insensitive), or `'either'` (one or the other; two different keys are 401
   * `malformed_api_key`, the same key in both is fine). @default 'header'
   */
  from?: KeySource;
  /** Key prefix. @default 'mk' */
  prefix?: string;
  /** Server-side pepper; must equal the `KeyManager`'s. @default undefined (plain SHA-256) */
  pepper?: string;
  /**
   * Milliseconds to wait for the store before answering 503; `0` waits without limit. A store that
   * declares a `deadline` capability no later than this (as `CachedKeyStore` does) is not timed twice.
   * @default 2000
   */
  timeoutMs?: number;
  /** Current time in epoch milliseconds, for expiry. @default Date.now */
  clock?: () => number;
  /**
   * Called with every result, after it is decided, for usage counting and events. Its errors are
   * swallowed: an observer can never change an outcome. @default undefined
   */
  onResult?: (result: AuthResult, request: AuthRequest) => void;
  /**
   * Failed-attempt throttling, e.g. `new FailedAttemptThrottle({ max: 10, windowMs: 60_000 })`: an
   * address over its limit gets 429 `too_many_failed_attempts`, whatever key it sends, and every 401
   * counts against it. An attempt is reserved before a store lookup, so concurrent bad keys cannot
   * outrun the count. @default undefined (no throttling)
   */
  throttle?: AttemptThrottle;
  /**
   * Where to report outcomes (`keygate.auth.requests` by outcome, code and mode) and durations
   * (`keygate.auth.duration`, seconds): an OpenTelemetry meter and/or tracer, or `globalTelemetry()`
   * from `keygate/otel`. @default undefined (no telemetry, no cost)
   */
  telemetry?: TelemetryOptions;
  /**
   * Per-key rate limits (check row 9), e.g. `{ limiter: new MemoryRateLimiter(), default: { limit: 100, windowMs: 60_000 } }`:
   * a request that passed every other check consumes `cost` units of its key's limit, and over it
   * gets 429 `rate_limited`. See {@link RateLimitOptions}. @default undefined (no rate limits)
   */
  rateLimit?: RateLimitOptions | null;
  /**
   * Prepaid credits (check row 10), e.g. `{ ledger: new PostgresCreditLedger({ client }), cost: 1 }`: a
   * live key's request that passed every other check holds `cost` credits of its account and the
   * result carries `credits: { holdId, cost, balance }` (settle or release the hold once the request
   * is answered); an account that cannot cover it gets 402 `insufficient_credits`. A `mk_test_` key
   * never touches the ledger. See {@link CreditOptions}. @default undefined (no billing)
   */
  credits?: CreditOptions | null;
}

/** Authentication options after validation, with defaults filled in. See {@link resolveAuthOptions}. */
export interface ResolvedOptions {
  readonly permissions: readonly string[];
  readonly header: string;
  readonly from: KeySource;
  readonly prefix: string;
  readonly pepper: string | undefined;
  /** Milliseconds to wait for the store; `0`: no limit. */
  readonly timeoutMs: number;
  readonly clock: () => number;
  readonly onResult: AuthenticateOptions['onResult'];
  readonly throttle: AttemptThrottle | undefined;
  readonly telemetry: Telemetry | undefined;
  readonly rateLimit: ResolvedRateLimit | undefined;
  readonly credits: ResolvedCredits | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const resolved = new WeakMap<AuthenticateOptions, ResolvedOptions>();
// Marks an object resolveAuthOptions made (a non-enumerable field: spreads and JSON leave it out).
const RESOLVED = Symbol('keygate.resolvedOptions');
/**
 * Every member an {@link AuthenticateOptions} object may have; any other is refused by
 * `resolveAuthOptions` (reason `unknown_option`), so a misspelt `permission` never opens a route.
 * An adapter adds its own names to these when it checks its options.
 *
 * @example
 * AUTH_OPTION_NAMES.includes('permissions') // true
 */
export const AUTH_OPTION_NAMES: readonly string[] = [
  'permissions',
  'header',
  'from',
  'prefix',
  'pepper',
  'timeoutMs',
  'clock',
  'onResult',
  'throttle',
  'telemetry',
  'rateLimit',
  'credits',
];

/** The options object used when none is given, so that its resolution is remembered too. */
export const NO_OPTIONS: AuthenticateOptions = {};

function refuse(field: string, message: string): never {
  throw new InvalidInputError(field, message);
}

const THROTTLE_METHODS = ['check', 'fail', 'reserve'] as const;

/**
 * Validates authentication options once; throws `InvalidInputError` naming the bad option.
 * `authenticate` calls it itself (and remembers the answer per options object); adapters call it
 * at construction so that bad configuration fails at start-up, not at the first request. Its answer,
 * given to `authenticate` or to it again, is its own resolution: nothing is validated twice.
 *
 * @example
 * resolveAuthOptions({ header: 'X-Key', timeoutMs: 500 });
 */
export function resolveAuthOptions(options: AuthenticateOptions = NO_OPTIONS): ResolvedOptions {
  let r = resolved.get(options);
  if (r) return r;
  // Resolved options given again (to authenticate, or resolved twice) are their own resolution.
  if ((options as { [RESOLVED]?: true })[RESOLVED] === true) return options as unknown as ResolvedOptions;
  checkOptionNames(options, AUTH_OPTION_NAMES, 'authenticate');
  const { header = 'x-api-key', prefix = DEFAULT_PREFIX, permissions = [], timeoutMs = 2000 } = options;
  const { pepper, clock = Date.now, throttle, from = 'header' } = options;
  if (typeof header !== 'string' || !TOKEN.test(header)) {
    refuse('header', `header must be an HTTP field name, got ${quote(header)}`);
  }
  if (from !== 'header' && from !== 'bearer' && from !== 'either') {
    refuse('from', `from must be "header", "bearer" or "either", got ${quote(from)}`);
  }
  assertPrefix(prefix);
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== 'string' || p === '')) {
    refuse('permissions', 'permissions must be an array of non-empty strings');
  }
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) {
    refuse('timeoutMs', `timeoutMs must be a number of milliseconds >= 0, got ${typeof timeoutMs}`);
  }
  if (pepper !== undefined && (typeof pepper !== 'string' || pepper === '')) {
    refuse('pepper', 'pepper must be a non-empty string');
  }
  if (typeof clock !== 'function') refuse('clock', 'clock must be a function returning epoch milliseconds');
  if (throttle !== undefined && !THROTTLE_METHODS.every((m) => typeof throttle?.[m] === 'function')) {
    refuse('throttle', 'throttle must have check, fail and reserve methods, e.g. a FailedAttemptThrottle');
  }
  r = {
    permissions: [...permissions],
    header: header.toLowerCase(),
    from,
    prefix,
    pepper,
    timeoutMs,
    clock,
    onResult: options.onResult,
    throttle,
    telemetry: createTelemetry(options.telemetry),
    rateLimit: resolveRateLimit(options.rateLimit, timeoutMs),
    credits: resolveCredits(options.credits, timeoutMs),
  };
  Object.defineProperty(r, RESOLVED, { value: true });
  resolved.set(options, r);
  return r;
}
