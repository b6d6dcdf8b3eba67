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
 * Returns the client address for a request (and the runtime's further arguments), or undefined when
 * it is not known.
 *
 * @example
 * const denoAddress: ClientIpResolver<[Deno.ServeHandlerInfo]> = (_request, info) => info.remoteAddr.hostname;
 */
export type ClientIpResolver<Rest extends unknown[] = unknown[]> = (
  request: Request,
  ...rest: Rest
) => string | null | undefined | Promise<string | null | undefined>;

/**
 * Options of {@link withApiKeyAuth}: the core options plus these.
 *
 * @example
 * const options: FetchApiKeyAuthOptions<[Env, ExecutionContext]> = { store, clientIp: clientIp.cloudflare };
 */
export interface FetchApiKeyAuthOptions<Rest extends unknown[] = unknown[]> extends AuthenticateOptions {
  /** Where keys are looked up; usually a `CachedKeyStore`. */
  store: KeyStore;
  /**
   * Where the client address comes from. Default: nowhere, so every key with an allow list is refused
   * with 403: a Fetch `Request` carries no peer address, and guessing from a header a client can set
   * would let anyone walk past an allow list. Use {@link clientIp.cloudflare} on Workers, or your
   * runtime's own API (Deno `info.remoteAddr`, Bun `server.requestIP(request)`). A header-based choice
   * is safe only behind a proxy that overwrites that header. If it throws, the address is unknown.
   */
  clientIp?: ClientIpResolver<Rest>;
  /** Seconds sent as `Retry-After` with a 503. Default `5`. */
  retryAfter?: number;
  /**
   * Replaces the problem+json denial with its own `Response`. It cannot continue the request: if it
   * throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, request: Request, ...rest: Rest) => Response | Promise<Response>;
}

/**
 * Ready-made {@link FetchApiKeyAuthOptions.clientIp} resolvers.
 *
 * @example
 * withApiKeyAuth(handler, { store, clientIp: clientIp.cloudflare });
 */
export const clientIp = {
  /**
   * Cloudflare's `CF-Connecting-IP`, which Cloudflare's edge always overwrites. Right on Workers and
   * behind Cloudflare's proxy; anywhere else a client can set this header to any address it likes.
   *
   * @example
   * withApiKeyAuth(handler, { store, clientIp: clientIp.cloudflare });
   */
  cloudflare(request: Request): string | undefined {
    return request.headers.get('cf-connecting-ip') ?? undefined;
  },
} as const;

async function addressOf<Rest extends unknown[]>(
  resolve: ClientIpResolver<Rest> | undefined,
  request: Request,
  rest: Rest,
): Promise<string | null | undefined> {
  if (!resolve) return undefined;
  try {
    return await resolve(request, ...rest);
  } catch {
    return undefined; // an unknown address: keys with an allow list are refused
  }
}

/**
 * Wraps a Fetch-API handler (Cloudflare Workers, Deno, Bun, Next.js route handlers): authenticates
 * the request's API key and calls `handler(request, key, ...rest)`, or answers with RFC 9457
 * problem+json (401, 403 or 503). Uses web standards only.
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
  if (typeof handler !== 'function') throw new TypeError('withApiKeyAuth: handler must be a function');
  const { store, clientIp: resolveIp, onDenied, retryAfter, ...auth } = options ?? ({} as FetchApiKeyAuthOptions<Rest>);
  if (!store || typeof store.findByHash !== 'function') {
    throw new TypeError('withApiKeyAuth: options.store must be a KeyStore');
  }
  if (resolveIp !== undefined && typeof resolveIp !== 'function') {
    throw new TypeError('withApiKeyAuth: options.clientIp must be a function');
  }
  resolveAuthOptions(auth);
  const respond = createDenialResponder({ header: auth.header, retryAfter });

  function denial(failure: AuthFailure): Response {
    const { status, headers, body } = respond(failure);
    // A copy: some Response implementations (@hono/node-server's) add Content-Length to the init object.
    return new Response(body, { status, headers: { ...headers } });
  }

  return async function apiKeyAuth(request: Request, ...rest: Rest): Promise<Response> {
    const ip = await addressOf(resolveIp, request, rest);
    const result = await authenticate({ headers: request.headers, ip }, store, auth);
    if (result.ok) return handler(request, result.key, ...rest);
    if (!onDenied) return denial(result);
    try {
      const custom = await onDenied(result, request, ...rest);
      return custom instanceof Response ? custom : denial(result);
    } catch {
      return denial(result);
    }
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
