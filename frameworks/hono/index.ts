import type { Context, MiddlewareHandler, Next } from 'hono';
import type { AuthFailure, AuthResult, AuthSuccess, HeldCredits, PublicKey } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticateEager,
  type ClientAddress,
  createFetchDenier,
  finishCredits,
  isPromise,
  type RateLimitHeaderFields,
  rateLimitHeaderFields,
  readAddress,
  resolveAdapterOptions,
  statusToBill,
  withRateLimitHeaders,
} from 'keygate/adapter-kit';

/**
 * The variables {@link apiKeyAuth} sets: `c.get('apiKey')` is the key's public view; with the
 * `credits` option, `c.get('apiKeyCredits')` is the hold of a request that holds credits.
 *
 * @example
 * const app = new Hono<{ Bindings: Env; Variables: ApiKeyVariables & { requestId: string } }>();
 */
export type ApiKeyVariables = { apiKey: PublicKey; apiKeyCredits?: HeldCredits };

/**
 * A Hono env with keygate's variables; pass it to `new Hono<ApiKeyEnv>()` or merge it into yours.
 *
 * @example
 * const app = new Hono<{ Bindings: Env } & ApiKeyEnv>();
 */
export type ApiKeyEnv = { Variables: ApiKeyVariables };

/**
 * Options of the Hono {@link apiKeyAuth} middleware: the core options, `store` and `retryAfterMs`, plus
 * these. A `rateLimit.cost` function receives the `Context` (`c`).
 *
 * @example
 * const options: HonoApiKeyAuthOptions = { store, clientIp: (c) => getConnInfo(c).remote.address };
 */
export interface HonoApiKeyAuthOptions extends AdapterOptions<Context> {
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

// Whether a route for the request's method matched: `app.use` middleware (keygate's own among them)
// and `app.all` handlers are registered for every method, as 'ALL'.
function routed(c: Context): boolean {
  return c.req.matchedRoutes.some((route) => route.method !== 'ALL');
}

/**
 * Hono middleware: authenticates the key of the request Hono handles (`c.req.raw`, also when a middleware
 * replaced it) and sets `c.get('apiKey')`, or answers with RFC 9457 problem+json (401, 402, 403, 429,
 * 500 or 503). With `rateLimit`, a limited key's responses carry `RateLimit-Policy` and `RateLimit`.
 * With `credits`, `c.get('apiKeyCredits')` is the hold, settled after the handler when the response's
 * status is below 500 and released otherwise (a handler that throws gets Hono's 500).
 * Bad options throw `InvalidInputError` here, naming the option.
 *
 * @example
 * const app = new Hono<ApiKeyEnv>();
 * app.use('/v1/*', apiKeyAuth({ store, permissions: ['email:verify'], clientIp: (c) => getConnInfo(c).remote.address }));
 * app.post('/v1/email/verify', (c) => c.json({ account: c.get('apiKey').accountId }));
 */
export function apiKeyAuth(options: HonoApiKeyAuthOptions): MiddlewareHandler<ApiKeyEnv> {
  const { store, auth, respond, clientIp, onDenied } = resolveAdapterOptions(options, 'apiKeyAuth (Hono)');
  const deny = createFetchDenier(respond, onDenied);

  // After the handler, whatever it answered (an error page included), so every response of the key says where its limit stands.
  async function limited(c: Context, next: Next, fields: RateLimitHeaderFields): Promise<undefined> {
    await next();
    const response = withRateLimitHeaders(c.res, fields);
    if (response !== c.res) c.res = response;
    return undefined;
  }

  // After the handler, its response's status decides (Hono answers a throw with its error handler's
  // response, a 500 unless it is an HTTPException); awaited, so that a serverless runtime cannot cut it off.
  // A 404 when no route of the request's method matched (only `use` middleware, or `all`) is Hono's
  // not-found answer: no route, no charge.
  async function billed(c: Context, next: Next, result: AuthSuccess): Promise<undefined> {
    c.set('apiKeyCredits', result.credits);
    await next();
    const status = c.res.status;
    await finishCredits(result, status === 404 ? statusToBill(status, routed(c)) : status, auth);
    return undefined;
  }

  function settle(result: AuthResult, c: Context, next: Next): Promise<Response | undefined> {
    if (!result.ok) return Promise.resolve(deny(result, c));
    c.set('apiKey', result.key);
    const run: Next = result.credits ? () => billed(c, next, result) : next;
    if (result.rateLimit) return limited(c, run, rateLimitHeaderFields(result.rateLimit));
    return run() as Promise<undefined>;
  }

  function check(c: Context, next: Next, ip: ClientAddress): Promise<Response | undefined> {
    // The Fetch headers of the request as it is now, through Hono's public API only.
    const asked: AdapterRequest<Context> = { headers: c.req.raw.headers, ip, native: c };
    const result = authenticateEager(asked, store, auth);
    return 'then' in result ? result.then((r) => settle(r, c, next)) : settle(result, c, next);
  }

  // No await of its own on the cached path: the only promise is the one `next()` returns.
  return function apiKeyAuth(c, next) {
    const ip = readAddress(clientIp, c);
    return isPromise(ip) ? ip.then((address) => check(c, next, address)) : check(c, next, ip);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
