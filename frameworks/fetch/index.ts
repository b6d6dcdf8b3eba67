import { type AuthFailure, type AuthSuccess, type HeldCredits, InvalidInputError, type PublicKey } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  type AuthenticateOptions,
  authenticate,
  createFetchDenier,
  finishCredits,
  rateLimitHeaderFields,
  readAddress,
  resolveAdapterOptions,
  withRateLimitHeaders,
} from 'keygate/adapter-kit';
import type { ClientIpResolver } from './client-ip.js';

/**
 * Options of {@link withApiKeyAuth}: the core options, `store` and `retryAfterMs`, plus these. A
 * `rateLimit.cost` function receives the `Request` (read its URL or headers; reading its body would
 * consume it before the handler).
 *
 * @example
 * const options: FetchApiKeyAuthOptions<[Env, ExecutionContext]> = { store, clientIp: clientIp.cloudflare };
 */
export interface FetchApiKeyAuthOptions<Rest extends unknown[] = unknown[]> extends AdapterOptions<Request> {
  /**
   * Where the client address comes from. Default: nowhere, so every key with an allow list is refused
   * with 403: a Fetch `Request` carries no peer address, and guessing from a header a client can set
   * would let anyone walk past an allow list. Use `clientIp.cloudflare` on Workers, or your
   * runtime's own API (Deno `info.remoteAddr`, Bun `server.requestIP(request)`). A header-based choice
   * is safe only behind a proxy that overwrites that header. If it throws, the address is unknown.
   */
  clientIp?: ClientIpResolver<Rest>;
  /**
   * Replaces the problem+json denial with its own `Response`. It cannot continue the request: if it
   * throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, request: Request, ...rest: Rest) => Response | Promise<Response>;
}

const held = new WeakMap<Request, HeldCredits>();

/**
 * The credits held for `request` by {@link withApiKeyAuth} with the `credits` option, for the handler
 * (whose signature is fixed); `undefined` for a request that holds none (a test key, a free request).
 *
 * @example
 * withApiKeyAuth((request, key) => Response.json({ balance: apiKeyCredits(request)?.balance }), { store, credits });
 */
export function apiKeyCredits(request: Request): HeldCredits | undefined {
  return held.get(request);
}

// Runs the handler of a request that holds credits: a status below 500 settles them, a 5xx or a throw
// (rethrown) releases them, awaited so that a serverless runtime cannot cut the settle off.
async function billed(
  result: AuthSuccess,
  auth: AuthenticateOptions,
  request: Request,
  run: () => Response | Promise<Response>,
): Promise<Response> {
  held.set(request, result.credits as HeldCredits);
  let response: Response;
  try {
    response = await run();
  } catch (error) {
    await finishCredits(result, 500, auth);
    throw error;
  }
  await finishCredits(result, response.status, auth);
  return response;
}

/**
 * Wraps a Fetch-API handler (Cloudflare Workers, Deno, Bun, Next.js route handlers): authenticates
 * the request's API key and calls `handler(request, key, ...rest)`, or answers with RFC 9457
 * problem+json (401, 402, 403, 429, 500 or 503). With `rateLimit`, a limited key's responses carry
 * `RateLimit-Policy` and `RateLimit` (the handler's `Response` is copied if its headers are
 * immutable). With `credits`, `apiKeyCredits(request)` gives the handler the hold, which is settled
 * (a status below 500) or released (a 5xx or a throw) before the `Response` is returned. Uses web standards only. Bad options throw `InvalidInputError`
 * here, naming the option in `field`.
 *
 * @example
 * export default {
 *   fetch: withApiKeyAuth((request, key, env) => Response.json({ account: key.accountId }), {
 *     store,
 *     permissions: ['email:verify'],
 *     clientIp: clientIp.cloudflare,
 *   }),
 * };
 */
export function withApiKeyAuth<Rest extends unknown[] = []>(
  handler: (request: Request, key: PublicKey, ...rest: Rest) => Response | Promise<Response>,
  options: FetchApiKeyAuthOptions<Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  if (typeof handler !== 'function') throw new InvalidInputError('handler', 'handler must be a function');
  const { store, auth, respond, clientIp: resolveIp, onDenied } = resolveAdapterOptions(options, 'withApiKeyAuth');
  const deny = createFetchDenier(respond, onDenied);

  return async function apiKeyAuth(request: Request, ...rest: Rest): Promise<Response> {
    const ip = await readAddress(resolveIp, request, ...rest);
    const asked: AdapterRequest<Request> = { headers: request.headers, ip, native: request };
    const result = await authenticate(asked, store, auth);
    if (!result.ok) return deny(result, request, ...rest);
    const run = () => handler(request, result.key, ...rest);
    const response = result.credits ? billed(result, auth, request, run) : run();
    if (!result.rateLimit) return response;
    return withRateLimitHeaders(await response, rateLimitHeaderFields(result.rateLimit));
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
export { type ClientIpResolver, clientIp } from './client-ip.js';
