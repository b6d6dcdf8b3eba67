import { describeValue, InvalidInputError, quote } from '../errors.js';
import { assertPrefix, DEFAULT_PREFIX } from '../key/format.js';
import type { AttemptThrottle } from '../throttle/types.js';
import type { AuthRequest, AuthResult } from './result.js';

/** Options of `authenticate`. Build them once (per middleware or route), not per request. */
export interface AuthenticateOptions {
  /** Permissions the route requires, all of them. @default [] */
  permissions?: readonly string[];
  /** Header that carries the key, matched case-insensitively. @default 'x-api-key' */
  header?: string;
  /** Key prefix. @default 'mk' */
  prefix?: string;
  /** Server-side pepper; must equal the `KeyManager`'s. @default undefined (plain SHA-256) */
  pepper?: string;
  /** Milliseconds to wait for the store before answering 503; `0` waits without limit. @default 2000 */
  timeout?: number;
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
}

/** Authentication options after validation, with defaults filled in. See {@link resolveAuthOptions}. */
export interface ResolvedOptions {
  readonly permissions: readonly string[];
  readonly header: string;
  readonly prefix: string;
  readonly pepper: string | undefined;
  readonly timeout: number;
  readonly clock: () => number;
  readonly onResult: AuthenticateOptions['onResult'];
  readonly throttle: AttemptThrottle | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const resolved = new WeakMap<AuthenticateOptions, ResolvedOptions>();
/** The options object used when none is given, so that its resolution is remembered too. */
export const NO_OPTIONS: AuthenticateOptions = {};

function validHeader(header: unknown): string {
  if (typeof header !== 'string' || !TOKEN.test(header)) {
    throw new InvalidInputError('header', `header must be an HTTP field name, got ${quote(header)}`);
  }
  return header.toLowerCase();
}

function validPermissions(permissions: unknown): string[] {
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== 'string' || p === '')) {
    throw new InvalidInputError('permissions', 'permissions must be an array of non-empty strings');
  }
  return [...permissions];
}

function validTimeout(timeout: unknown): number {
  if (typeof timeout !== 'number' || !(timeout >= 0)) {
    throw new InvalidInputError(
      'timeout',
      `timeout must be a number of milliseconds >= 0, got ${describeValue(timeout)}`,
    );
  }
  return timeout;
}

function validThrottle(throttle: unknown): AttemptThrottle | undefined {
  const t = throttle as Partial<AttemptThrottle> | undefined;
  if (
    t !== undefined &&
    !(typeof t?.check === 'function' && typeof t.fail === 'function' && typeof t.reserve === 'function')
  ) {
    throw new InvalidInputError(
      'throttle',
      'throttle must have check(address), fail(address) and reserve(address), e.g. a FailedAttemptThrottle',
    );
  }
  return t as AttemptThrottle | undefined;
}

function validPepper(pepper: unknown): string | undefined {
  if (pepper !== undefined && (typeof pepper !== 'string' || pepper === '')) {
    throw new InvalidInputError('pepper', 'pepper must be a non-empty string');
  }
  return pepper;
}

function validClock(clock: unknown): () => number {
  if (typeof clock !== 'function') {
    throw new InvalidInputError(
      'clock',
      `clock must be a function returning epoch milliseconds, got ${describeValue(clock)}`,
    );
  }
  return clock as () => number;
}

/**
 * Validates authentication options once; throws `InvalidInputError` naming the bad option.
 * `authenticate` calls it itself (and remembers the answer per options object); adapters call it
 * at construction so that bad configuration fails at start-up, not at the first request.
 *
 * @example
 * resolveAuthOptions({ header: 'X-Key', timeout: 500 });
 */
export function resolveAuthOptions(options: AuthenticateOptions = NO_OPTIONS): ResolvedOptions {
  let r = resolved.get(options);
  if (r) return r;
  if ('now' in options) throw new InvalidInputError('now', 'the option now was renamed clock (same meaning)');
  const header = validHeader(options.header ?? 'x-api-key');
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  r = {
    header,
    prefix,
    permissions: validPermissions(options.permissions ?? []),
    pepper: validPepper(options.pepper),
    timeout: validTimeout(options.timeout ?? 2000),
    clock: validClock(options.clock ?? Date.now),
    onResult: options.onResult,
    throttle: validThrottle(options.throttle),
  };
  resolved.set(options, r);
  return r;
}
