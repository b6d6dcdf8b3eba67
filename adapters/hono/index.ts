import type { Context, MiddlewareHandler, Next } from 'hono';
import {
  type AuthenticateOptions,
  type AuthFailure,
  type AuthResult,
  authenticateEager,
  createDenialResponder,
  type HeaderSource,
  type KeyStore,
  type PublicKey,
  resolveAuthOptions,
} from 'keygate';

/**
 * The variables {@link apiKeyAuth} sets: `c.get('apiKey')` is the key's public view.
 *
 * @example
 * const app = new Hono<{ Bindings: Env; Variables: ApiKeyVariables & { requestId: string } }>();
 */
export type ApiKeyVariables = { apiKey: PublicKey };

/**
 * A Hono env with keygate's variables; pass it to `new Hono<ApiKeyEnv>()` or merge it into yours.
 *
 * @example
 * const app = new Hono<{ Bindings: Env } & ApiKeyEnv>();
 */
export type ApiKeyEnv = { Variables: ApiKeyVariables };

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

// On @hono/node-server, `c.env.incoming` is Node's request: reading the key from its headers object
// spares building a Fetch `Headers` from every raw header just to read one field. Anywhere else (and
// whenever `incoming` is not shaped like Node's request) the Fetch request's headers are read.
function headersOf(c: Context): HeaderSource {
  const incoming = (c.env as { incoming?: { headers?: unknown; rawHeaders?: unknown } } | undefined)?.incoming;
  if (incoming && Array.isArray(incoming.rawHeaders) && typeof incoming.headers === 'object' && incoming.headers) {
    return incoming.headers as HeaderSource;
  }
  return c.req.raw.headers;
}

/**
 * Options of the Hono {@link apiKeyAuth} middleware: the core options plus these.
 *
 * @example
 * const options: HonoApiKeyAuthOptions = { store, clientIp: (c) => getConnInfo(c).remote.address };
 */
export interface HonoApiKeyAuthOptions extends AuthenticateOptions {
  /** Where keys are looked up; usually a `CachedKeyStore`. */
  store: KeyStore;
  /**
   * Where the client address comes from. Default: nowhere, so every key with an allow list is refused
   * with 403. Use Hono's `getConnInfo` for your runtime (`hono/cloudflare-workers`, `hono/deno`,
   * `hono/bun`, `@hono/node-server/conninfo`): `(c) => getConnInfo(c).remote.address`. A header-based
   * choice is safe only behind a proxy that overwrites that header. If it throws, the address is unknown.
   */
  clientIp?: (c: Context) => string | null | undefined | Promise<string | null | undefined>;
  /** Seconds sent as `Retry-After` with a 503. Default `5`. */
  retryAfter?: number;
  /**
   * Replaces the problem+json denial with its own `Response` (e.g. `c.json(...)`). It gets no `next`:
   * if it throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, c: Context) => Response | Promise<Response>;
}

/**
 * Hono middleware: authenticates the request's API key and sets `c.get('apiKey')`, or answers with
 * RFC 9457 problem+json (401, 403 or 503). Bad options throw here, not at the first request.
 *
 * @example
 * const app = new Hono<ApiKeyEnv>();
 * app.use('/v1/*', apiKeyAuth({ store, permissions: ['email:verify'], clientIp: (c) => getConnInfo(c).remote.address }));
 * app.post('/v1/email/verify', (c) => c.json({ account: c.get('apiKey').accountId }));
 */
export function apiKeyAuth(options: HonoApiKeyAuthOptions): MiddlewareHandler<ApiKeyEnv> {
  const { store, clientIp, onDenied, retryAfter, ...auth } = options ?? ({} as HonoApiKeyAuthOptions);
  if (!store || typeof store.findByHash !== 'function') {
    throw new TypeError('apiKeyAuth: options.store must be a KeyStore');
  }
  if (clientIp !== undefined && typeof clientIp !== 'function') {
    throw new TypeError('apiKeyAuth: options.clientIp must be a function');
  }
  resolveAuthOptions(auth);
  const respond = createDenialResponder({ header: auth.header, retryAfter });

  function denial(failure: AuthFailure): Response {
    const { status, headers, body } = respond(failure);
    // A copy: some Response implementations (@hono/node-server's) add Content-Length to the init object.
    return new Response(body, { status, headers: { ...headers } });
  }

  // A clientIp that throws or rejects gives an unknown address: keys with an allow list are refused.
  function addressOf(c: Context): string | null | undefined | Promise<string | null | undefined> {
    if (!clientIp) return undefined;
    try {
      const ip = clientIp(c);
      return isPromise(ip) ? ip.then(undefined, () => undefined) : ip;
    } catch {
      return undefined;
    }
  }

  async function deny(failure: AuthFailure, c: Context): Promise<Response> {
    if (!onDenied) return denial(failure);
    try {
      const custom = await onDenied(failure, c);
      return custom instanceof Response ? custom : denial(failure);
    } catch {
      return denial(failure);
    }
  }

  function settle(result: AuthResult, c: Context, next: Next): Promise<Response | undefined> {
    if (!result.ok) return deny(result, c);
    c.set('apiKey', result.key);
    return next() as Promise<undefined>;
  }

  function check(c: Context, next: Next, ip: string | null | undefined): Promise<Response | undefined> {
    const result = authenticateEager({ headers: headersOf(c), ip }, store, auth);
    return 'then' in result ? result.then((r) => settle(r, c, next)) : settle(result, c, next);
  }

  // No await of its own on the cached path: the only promise is the one `next()` returns.
  return function apiKeyAuth(c, next) {
    const ip = addressOf(c);
    return isPromise(ip) ? ip.then((address) => check(c, next, address)) : check(c, next, ip);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
