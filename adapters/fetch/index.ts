import { type AuthFailure, InvalidInputError, type PublicKey } from 'keygate';
import {
  type AdapterOptions,
  authenticate,
  createFetchDenier,
  readAddress,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';
import type { ClientIpResolver } from './client-ip.js';

/**
 * Options of {@link withApiKeyAuth}: the core options, `store` and `retryAfterMs`, plus these.
 *
 * @example
 * const options: FetchApiKeyAuthOptions<[Env, ExecutionContext]> = { store, clientIp: clientIp.cloudflare };
 */
export interface FetchApiKeyAuthOptions<Rest extends unknown[] = unknown[]> extends AdapterOptions {
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

/**
 * Wraps a Fetch-API handler (Cloudflare Workers, Deno, Bun, Next.js route handlers): authenticates
 * the request's API key and calls `handler(request, key, ...rest)`, or answers with RFC 9457
 * problem+json (401, 403, 429 or 503). Uses web standards only. Bad options throw `InvalidInputError`
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
  const { store, auth, respond, clientIp: resolveIp, onDenied } = resolveAdapterOptions(options);
  const deny = createFetchDenier(respond, onDenied);

  return async function apiKeyAuth(request: Request, ...rest: Rest): Promise<Response> {
    const ip = await readAddress(resolveIp, request, ...rest);
    const result = await authenticate({ headers: request.headers, ip }, store, auth);
    return result.ok ? handler(request, result.key, ...rest) : deny(result, request, ...rest);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
export { type ClientIpResolver, clientIp } from './client-ip.js';
