import {
  type AuthenticateOptions,
  type AuthRequest,
  type CreditOptions,
  InvalidInputError,
  type KeyStore,
  type RateLimitOptions,
} from 'keygate';
import { resolveAuthOptions } from '../auth/authenticate.js';
import { AUTH_OPTION_NAMES } from '../auth/options.js';
import { checkOptionNames } from '../validate/options.js';
import { createDenialResponder, type DenialResponder } from './problem.js';

/**
 * What every adapter takes: the core options of `authenticate`, the store, and the 503 wait.
 * An adapter extends it with its own `onDenied` (and `clientIp` where the framework has no address).
 * `Native` is the framework's request: the adapter passes it to `authenticate` as the `native`
 * member of an {@link AdapterRequest}, which is what a `rateLimit.cost` or `credits.cost` function receives.
 *
 * @example
 * interface KoaApiKeyAuthOptions extends AdapterOptions<Context> {
 *   onDenied?: (failure: AuthFailure, ctx: Context) => void | Promise<void>;
 * }
 */
export interface AdapterOptions<Native = unknown> extends Omit<AuthenticateOptions, 'rateLimit' | 'credits'> {
  /** Where keys are looked up; usually a `CachedKeyStore`. */
  store: KeyStore;
  /**
   * Milliseconds a client should wait after a 503, sent as `Retry-After` in whole seconds (rounded
   * up, at least 1). @default 5000
   */
  retryAfterMs?: number;
  /**
   * Per-key rate limits, as `authenticate` takes them; a `cost` function receives the
   * {@link AdapterRequest}, whose `native` is the framework's own request
   * (`cost: ({ native }) => native.body.emails.length`). A limited key's responses carry
   * `RateLimit-Policy` and `RateLimit`, and a 429 `Retry-After`. @default undefined (no rate limits)
   */
  rateLimit?: RateLimitOptions<AdapterRequest<Native>> | null;
  /**
   * Prepaid credits, as `authenticate` takes them; a `cost` function receives the
   * {@link AdapterRequest}, like `rateLimit.cost`. The adapter holds the cost before the handler and
   * settles it after (a status below 500) or releases it (5xx, or a handler that threw), and hands the
   * handler the hold. @default undefined (no billing)
   */
  credits?: CreditOptions<AdapterRequest<Native>> | null;
}

/**
 * The request an adapter hands to `authenticate`: the address and headers, plus the framework's own
 * request as `native`, for a `rateLimit.cost` function (which receives this very object).
 *
 * @example
 * const request: AdapterRequest<express.Request> = { headers: req.headers, ip: req.ip, native: req };
 * const result = authenticateEager(request, store, auth);
 */
export interface AdapterRequest<Native> extends AuthRequest {
  readonly native: Native;
}

/**
 * An adapter's options after {@link resolveAdapterOptions}: the store, the core options to pass to
 * `authenticate` (the same object every time, so they are validated once), the denial builder, and
 * the adapter's own hooks, known to be functions.
 *
 * @example
 * const { store, auth, respond, onDenied } = resolveAdapterOptions(options);
 */
export interface ResolvedAdapterOptions<O extends AdapterOptions<never>> {
  /** Where keys are looked up. */
  readonly store: KeyStore;
  /** The core options for `authenticate`: pass this very object on every request. */
  readonly auth: AuthenticateOptions;
  /** Builds the standard denial for a failure. */
  readonly respond: DenialResponder;
  /** The adapter's `clientIp` option, known to be a function or undefined. */
  readonly clientIp: (O extends { clientIp?: infer F } ? Exclude<F, undefined> : never) | undefined;
  /** The adapter's `onDenied` option, known to be a function or undefined. */
  readonly onDenied: (O extends { onDenied?: infer F } ? Exclude<F, undefined> : never) | undefined;
}

function assertFunction(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new InvalidInputError(field, `${field} must be a function, got ${value === null ? 'null' : typeof value}`);
  }
}

/** The members every adapter's options may have beyond the core ones: `store`, `retryAfterMs`, `clientIp`, `onDenied`. */
const ADAPTER_OWN = ['store', 'retryAfterMs', 'clientIp', 'onDenied'];

/**
 * Validates an adapter's options once, at construction: every member must be one the adapter
 * takes (the core options of `authenticate`, `store`, `retryAfterMs`, `clientIp`, `onDenied` and
 * the adapter's own `extra` names; anything else, such as a misspelt `permisions`, is refused with
 * reason `unknown_option` and a "did you mean"), `store` must be a `KeyStore`, `clientIp` and
 * `onDenied` functions when given, `retryAfterMs` a number of milliseconds >= 0, and the core
 * options are checked by `resolveAuthOptions`. Throws `InvalidInputError` whose `field` names the
 * option, so bad configuration fails at start-up, never at the first request. The returned `auth`
 * holds only the core options (the `extra` members are left out).
 *
 * @param where the adapter's name for messages. @default 'apiKeyAuth'
 * @param extra option names the adapter takes besides the shared ones. @default []
 * @example
 * const { store, auth, respond, onDenied } = resolveAdapterOptions(options, 'keygate (Fastify)', ['routes']);
 * const result = await authenticate({ headers, ip }, store, auth);
 */
export function resolveAdapterOptions<O extends AdapterOptions<never>>(
  options: O,
  where = 'apiKeyAuth',
  extra: readonly string[] = [],
): ResolvedAdapterOptions<O> {
  checkOptionNames(options, [...AUTH_OPTION_NAMES, ...ADAPTER_OWN, ...extra], where);
  const given = (options !== null && typeof options === 'object' ? options : {}) as O & {
    clientIp?: unknown;
    onDenied?: unknown;
  };
  const { store, clientIp, onDenied, retryAfterMs, ...rest } = given;
  for (const name of extra) delete (rest as Record<string, unknown>)[name];
  // The cost function takes the AdapterRequest the adapter passes to `authenticate`, which is an AuthRequest.
  const auth = rest as AuthenticateOptions;
  if (!store || typeof (store as Partial<KeyStore>).findByHash !== 'function') {
    throw new InvalidInputError('store', 'store must be a KeyStore (an object with findByHash(hash))');
  }
  assertFunction('clientIp', clientIp);
  assertFunction('onDenied', onDenied);
  resolveAuthOptions(auth);
  const respond = createDenialResponder({ header: auth.header, from: auth.from, retryAfterMs });
  return { store, auth, respond, clientIp, onDenied } as ResolvedAdapterOptions<O>;
}
