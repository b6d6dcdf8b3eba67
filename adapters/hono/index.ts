import type { Context, MiddlewareHandler } from 'hono';
import {
  type AuthenticateOptions,
  type AuthFailure,
  authenticate,
  createDenialResponder,
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

  async function addressOf(c: Context): Promise<string | null | undefined> {
    try {
      return await clientIp?.(c);
    } catch {
      return undefined; // an unknown address: keys with an allow list are refused
    }
  }

  return async function apiKeyAuth(c, next) {
    const ip = await addressOf(c);
    const result = await authenticate({ headers: c.req.raw.headers, ip }, store, auth);
    if (result.ok) {
      c.set('apiKey', result.key);
      await next();
      return;
    }
    if (!onDenied) return denial(result);
    try {
      const custom = await onDenied(result, c);
      return custom instanceof Response ? custom : denial(result);
    } catch {
      return denial(result);
    }
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
