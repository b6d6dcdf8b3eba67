import type { Context, MiddlewareHandler, Next } from 'hono';
import type { AuthFailure, AuthResult, PublicKey } from 'keygate';
import {
  type AdapterOptions,
  authenticateEager,
  type ClientAddress,
  createFetchDenier,
  isPromise,
  readAddress,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';
import { headersOf } from './headers.js';

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
 * Options of the Hono {@link apiKeyAuth} middleware: the core options, `store` and `retryAfterMs`, plus these.
 *
 * @example
 * const options: HonoApiKeyAuthOptions = { store, clientIp: (c) => getConnInfo(c).remote.address };
 */
export interface HonoApiKeyAuthOptions extends AdapterOptions {
  /**
   * Where the client address comes from. Default: nowhere, so keys with an allow list get 403. Use Hono's
   * `getConnInfo` for your runtime (`hono/bun`, `@hono/node-server/conninfo`, ...): `(c) => getConnInfo(c).remote.address`.
   * A header is safe only behind a proxy that overwrites it. If it throws, the address is unknown.
   */
  clientIp?: (c: Context) => ClientAddress | Promise<ClientAddress>;
  /**
   * Replaces the problem+json denial with its own `Response` (e.g. `c.json(...)`). It gets no `next`:
   * if it throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, c: Context) => Response | Promise<Response>;
}

/**
 * Hono middleware: authenticates the key of the request Hono handles (`c.req.raw`, also when a middleware
 * replaced it) and sets `c.get('apiKey')`, or answers with RFC 9457 problem+json (401, 403, 429 or 503).
 * Bad options throw `InvalidInputError` here, naming the option.
 *
 * @example
 * const app = new Hono<ApiKeyEnv>();
 * app.use('/v1/*', apiKeyAuth({ store, permissions: ['email:verify'], clientIp: (c) => getConnInfo(c).remote.address }));
 * app.post('/v1/email/verify', (c) => c.json({ account: c.get('apiKey').accountId }));
 */
export function apiKeyAuth(options: HonoApiKeyAuthOptions): MiddlewareHandler<ApiKeyEnv> {
  const { store, auth, respond, clientIp, onDenied } = resolveAdapterOptions(options);
  const deny = createFetchDenier(respond, onDenied);

  function settle(result: AuthResult, c: Context, next: Next): Promise<Response | undefined> {
    if (!result.ok) return Promise.resolve(deny(result, c));
    c.set('apiKey', result.key);
    return next() as Promise<undefined>;
  }

  function check(c: Context, next: Next, ip: ClientAddress): Promise<Response | undefined> {
    const result = authenticateEager({ headers: headersOf(c.req.raw), ip }, store, auth);
    return 'then' in result ? result.then((r) => settle(r, c, next)) : settle(result, c, next);
  }

  // No await of its own on the cached path: the only promise is the one `next()` returns.
  return function apiKeyAuth(c, next) {
    const ip = readAddress(clientIp, c);
    return isPromise(ip) ? ip.then((address) => check(c, next, address)) : check(c, next, ip);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
