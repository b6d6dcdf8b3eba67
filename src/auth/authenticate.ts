import { InvalidInputError, quote } from '../errors.js';
import { assertPrefix, DEFAULT_PREFIX, isWellFormedKey } from '../key/format.js';
import { digestKey } from '../key/hash.js';
import type { AttemptThrottle } from '../throttle/failed-attempts.js';
import type { ApiKeyRecord, KeyStore } from '../types.js';
import { type CompiledKey, compileKey } from './compiled-key.js';
import { DENIALS, type DenialCode } from './denials.js';
import { readHeader } from './read-header.js';
import type { AuthFailure, AuthRequest, AuthResult } from './result.js';

export type { AuthFailure, AuthRequest, AuthResult, AuthSuccess } from './result.js';

/** Options of {@link authenticate}. Build them once (per middleware or route), not per request. */
export interface AuthenticateOptions {
  /** Permissions the route requires, all of them. Default: none. */
  permissions?: readonly string[];
  /** Header that carries the key, matched case-insensitively. Default `'x-api-key'`. */
  header?: string;
  /** Key prefix. Default `'mk'`. */
  prefix?: string;
  /** Server-side pepper; must equal the `KeyManager`'s. Default: none (plain SHA-256). */
  pepper?: string;
  /** Milliseconds to wait for the store before answering 503. Default `2000`; `0` waits without limit. */
  timeout?: number;
  /** Current time in epoch milliseconds, for expiry. Default `Date.now`. */
  now?: () => number;
  /**
   * Called with every result, after it is decided, for usage counting and events. Its errors are
   * swallowed: an observer can never change an outcome.
   */
  onResult?: (result: AuthResult, request: AuthRequest) => void;
  /**
   * Failed-attempt throttling, e.g. `new FailedAttemptThrottle({ max: 10, window: 60_000 })`: checked
   * before anything else (an address over its limit gets 429 `too_many_failed_attempts`, whatever
   * key it sends) and told of every 401. Default: none.
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
  readonly now: () => number;
  readonly onResult: AuthenticateOptions['onResult'];
  readonly throttle: AttemptThrottle | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const resolved = new WeakMap<AuthenticateOptions, ResolvedOptions>();
const NO_OPTIONS: AuthenticateOptions = {};

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
  const header = options.header ?? 'x-api-key';
  if (typeof header !== 'string' || !TOKEN.test(header)) {
    throw new InvalidInputError('header', `header must be an HTTP field name, got ${quote(header)}`);
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  const permissions = options.permissions ?? [];
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== 'string' || p === '')) {
    throw new InvalidInputError('permissions', 'permissions must be an array of non-empty strings');
  }
  const timeout = options.timeout ?? 2000;
  if (typeof timeout !== 'number' || !(timeout >= 0)) {
    throw new InvalidInputError('timeout', `timeout must be a number of milliseconds >= 0, got ${String(timeout)}`);
  }
  if (options.pepper !== undefined && (typeof options.pepper !== 'string' || options.pepper === '')) {
    throw new InvalidInputError('pepper', 'pepper must be a non-empty string');
  }
  const throttle = options.throttle;
  if (throttle !== undefined && (typeof throttle?.check !== 'function' || typeof throttle.fail !== 'function')) {
    throw new InvalidInputError(
      'throttle',
      'throttle must have check(address) and fail(address), e.g. a FailedAttemptThrottle',
    );
  }
  r = {
    permissions: [...permissions],
    header: header.toLowerCase(),
    prefix,
    pepper: options.pepper,
    timeout,
    now: options.now ?? Date.now,
    onResult: options.onResult,
    throttle: options.throttle,
  };
  resolved.set(options, r);
  return r;
}

// Denials that carry no key are the same object every time: nothing to allocate on a flood.
const BARE: { readonly [C in DenialCode]: AuthFailure } = Object.fromEntries(
  Object.entries(DENIALS).map(([code, d]) => [
    code,
    Object.freeze({ ok: false, status: d.status, code, message: d.detail }),
  ]),
) as never;

// Results that carry a key are built once per compiled record and reused: the cached path allocates nothing.
function resultFor(key: CompiledKey, code: DenialCode | 'allowed'): AuthResult {
  let r = key.results[code];
  if (r === undefined) {
    if (code === 'allowed') r = Object.freeze({ ok: true, status: 200, key: key.view });
    else {
      const d = DENIALS[code];
      r = Object.freeze({ ok: false, status: d.status, code, message: d.detail, key: key.view });
    }
    key.results[code] = r;
  }
  return r;
}

function timeoutAfter(ms: number): { promise: Promise<never>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`key store did not answer within ${ms} ms`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

async function load(store: KeyStore, hash: string, timeout: number): Promise<ApiKeyRecord | null | undefined> {
  if (timeout === 0) return store.findByHash(hash);
  const t = timeoutAfter(timeout);
  try {
    return await Promise.race([store.findByHash(hash), t.promise]);
  } finally {
    t.cancel();
  }
}

// The checks after the lookup, synchronous: a record from the cache is judged without a single await.
function judge(request: AuthRequest, o: ResolvedOptions, hash: string, record: unknown): AuthResult {
  if (record == null) return BARE.invalid_api_key;
  let key: CompiledKey;
  try {
    // A record that is not the one asked for, or cannot be compiled, is a store fault: fail closed.
    if (typeof record !== 'object' || (record as ApiKeyRecord).hash !== hash) return BARE.key_store_unavailable;
    key = compileKey(record as ApiKeyRecord);
    // An expiry that is not a date would read as "never expires": garbage, so fail closed.
    if (Number.isNaN(key.expiresAtMs)) return BARE.key_store_unavailable;
  } catch {
    return BARE.key_store_unavailable;
  }
  if (key.revoked) return resultFor(key, 'revoked_api_key');
  if (key.expiresAtMs !== Number.POSITIVE_INFINITY && o.now() >= key.expiresAtMs) {
    return resultFor(key, 'expired_api_key');
  }
  if (!key.allowList.allows(request.ip)) return resultFor(key, 'ip_not_allowed');
  const required = o.permissions;
  for (let i = 0; i < required.length; i++) {
    if (!key.permissions.has(required[i] as string)) return resultFor(key, 'insufficient_permissions');
  }
  return resultFor(key, 'allowed');
}

function lookUp(
  request: AuthRequest,
  store: KeyStore,
  o: ResolvedOptions,
  hash: string,
): AuthResult | Promise<AuthResult> {
  let cached: ApiKeyRecord | null | undefined;
  try {
    cached = store.peek?.(hash);
  } catch {
    return BARE.key_store_unavailable;
  }
  if (cached !== undefined) return judge(request, o, hash, cached);
  return load(store, hash, o.timeout).then(
    (record) => judge(request, o, hash, record),
    () => BARE.key_store_unavailable,
  );
}

// Every check in order; synchronous until the store has to be asked (a cache miss, or a Web Crypto digest).
function decide(request: AuthRequest, store: KeyStore, o: ResolvedOptions): AuthResult | Promise<AuthResult> {
  const raw = readHeader(request.headers, o.header);
  if (raw === undefined) return BARE.missing_api_key;
  if (raw === null || !isWellFormedKey(raw, o.prefix)) return BARE.malformed_api_key;
  let digest: string | Promise<string>;
  try {
    digest = digestKey(raw, o.pepper);
  } catch {
    return BARE.key_store_unavailable;
  }
  return typeof digest === 'string'
    ? lookUp(request, store, o, digest)
    : digest.then(
        (hash) => lookUp(request, store, o, hash),
        () => BARE.key_store_unavailable,
      );
}

// A throttle that throws counts as no throttle: it may slow clients down, never let one in.
async function throttled(
  request: AuthRequest,
  store: KeyStore,
  o: ResolvedOptions,
  throttle: AttemptThrottle,
): Promise<AuthResult> {
  let wait = 0;
  try {
    wait = await throttle.check(request.ip);
  } catch {}
  if (wait > 0) {
    const d = DENIALS.too_many_failed_attempts;
    return { ok: false, status: d.status, code: 'too_many_failed_attempts', message: d.detail, retryAfter: wait };
  }
  const result = await decide(request, store, o);
  if (result.status === 401) {
    try {
      await throttle.fail(request.ip);
    } catch {}
  }
  return result;
}

function observed(result: AuthResult, request: AuthRequest, o: ResolvedOptions): AuthResult {
  if (o.onResult) {
    try {
      o.onResult(result, request);
    } catch {
      // An observer never changes an outcome.
    }
  }
  return result;
}

/**
 * {@link authenticate} for adapters that can carry on synchronously: the same checks, options and
 * result, but the result itself when no I/O was needed (a cached key, a remembered unknown key, a
 * missing or malformed one, with Node's synchronous digest) and a Promise only when the store has to
 * be asked. Frameworks charge for every asynchronous step of a middleware; this lets an adapter call
 * `next()` at once on the cached path. Never throws for anything a client sends; bad options throw.
 *
 * @example
 * const r = authenticateEager({ headers: req.headers, ip: req.ip }, store, options);
 * if ('then' in r) r.then(finish); else finish(r);
 */
export function authenticateEager(
  request: AuthRequest,
  store: KeyStore,
  options: AuthenticateOptions = NO_OPTIONS,
): AuthResult | Promise<AuthResult> {
  const o = resolveAuthOptions(options);
  const result = o.throttle ? throttled(request, store, o, o.throttle) : decide(request, store, o);
  return 'then' in result ? result.then((r) => observed(r, request, o)) : observed(result, request, o);
}

/**
 * Authenticates one request by its API key. Checks run in the contract's order and the first that
 * fails decides: missing (401), malformed (401, no store lookup), store failure or timeout (503,
 * never an allow), unknown (401), revoked (401), expired (401), address outside a non-empty allow
 * list (403), missing permission (403). With `options.throttle`, an address over its failed-attempt
 * limit is refused first (429), and every 401 counts against it. Never throws for anything a client sends.
 *
 * @example
 * const result = await authenticate({ headers: req.headers, ip: req.ip }, store, { permissions: ['email:verify'] });
 * if (!result.ok) return reply(result.status, result.code);
 * result.key.accountId; // 'acct_1'
 */
export function authenticate(
  request: AuthRequest,
  store: KeyStore,
  options: AuthenticateOptions = NO_OPTIONS,
): Promise<AuthResult> {
  try {
    const result = authenticateEager(request, store, options);
    return 'then' in result ? result : Promise.resolve(result);
  } catch (error) {
    return Promise.reject(error);
  }
}
