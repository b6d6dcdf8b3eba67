import type { AuthFailure } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticate,
  createFetchDenier,
  rateLimitHeaderFields,
  readAddress,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';
import { type NextRequest, NextResponse } from 'next/server.js';
import { InvalidInputError } from '#errors';
import { type NextClientIpResolver, platformIp } from './client-ip.js';
import { compilePaths, type PathPattern } from './paths.js';
import { importSecret, SIGNED_KEY_HEADER, signKey } from './signed-key.js';

/**
 * Options of {@link apiKeyMiddleware}: the core options, `store`, `retryAfterMs` and `rateLimit`, plus
 * these. A `rateLimit.cost` function receives the `NextRequest` as `native` (read its URL or headers:
 * a middleware should not read the body). There is no `credits` option: see {@link apiKeyMiddleware}.
 *
 * @example
 * const options: NextApiKeyMiddlewareOptions = { store, secret: process.env.KEYGATE_NEXT_SECRET!, paths: ['/api/v1'] };
 */
export interface NextApiKeyMiddlewareOptions extends Omit<AdapterOptions<NextRequest>, 'credits'> {
  /**
   * Signs the key's public view that the middleware forwards to the route (HMAC-SHA-256): a string of
   * at least 32 bytes, kept server-side (an environment variable), the same one the route gives
   * {@link apiKeyFromHeaders}. Required.
   */
  secret: string;
  /**
   * Where a key is required, within the paths Next runs the middleware on (its `config.matcher`): path
   * prefixes on segment boundaries and `RegExp`s tested against `request.nextUrl.pathname`. Other
   * paths pass without a key (their incoming signed header is still removed). @default every path
   */
  paths?: readonly PathPattern[];
  /**
   * Where the client address comes from. Default: `request.ip` where the platform sets it (Next.js 14
   * on some hosts; Next.js 15 and later never do), else nowhere, so every key with an allow list is
   * refused with 403. On Vercel use `clientIp.vercel`; behind your own proxy, read the header it
   * overwrites. A header is safe only behind a proxy that overwrites it. If it throws, the address is unknown.
   */
  clientIp?: NextClientIpResolver;
  /**
   * Replaces the problem+json denial with its own `Response`. It cannot let the request through: if it
   * throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, request: NextRequest) => Response | Promise<Response>;
  /** Not supported: throws `InvalidInputError`. Bill in the route handler with `withApiKeyAuth` of `keygate/fetch`. */
  credits?: never;
}

/** The members of {@link NextApiKeyMiddlewareOptions} beyond the ones every adapter takes. */
const NEXT_OWN = ['secret', 'paths'];

/** The request's headers without a signed view a client sent; null when it sent none. */
function withoutSignedKey(headers: Headers): Headers | null {
  if (!headers.has(SIGNED_KEY_HEADER)) return null;
  const copy = new Headers(headers);
  copy.delete(SIGNED_KEY_HEADER);
  return copy;
}

/**
 * Next.js middleware (`middleware.ts` on the Edge or Node runtime, or `proxy.ts` in Next.js 16):
 * authenticates the API key of requests whose path is in `paths` and lets them through with
 * `NextResponse.next()`, the key's public view forwarded to the route in a signed request header
 * that {@link apiKeyFromHeaders} reads; or answers with RFC 9457 problem+json (401, 403, 429, 500 or
 * 503), the same bytes as every keygate adapter. Any copy of that header a client sent is removed
 * first, on every path. With `rateLimit`, a limited key's responses carry `RateLimit-Policy` and
 * `RateLimit`. Bad options throw `InvalidInputError` here, naming the option in `field`.
 *
 * There is no `credits` option (it throws): a middleware never sees the route's status, so it could
 * neither settle a hold on success nor release it on a 5xx. Wrap a billed route handler in
 * `withApiKeyAuth` of `keygate/fetch` with `credits` instead.
 *
 * @example
 * // middleware.ts
 * export default apiKeyMiddleware({
 *   store,
 *   secret: process.env.KEYGATE_NEXT_SECRET!,
 *   permissions: ['email:verify'],
 *   paths: ['/api/v1'],
 * });
 * export const config = { matcher: '/api/:path*' };
 */
export function apiKeyMiddleware(options: NextApiKeyMiddlewareOptions): (request: NextRequest) => Promise<Response> {
  const given = (options ?? {}) as NextApiKeyMiddlewareOptions & { credits?: unknown };
  if (given.credits != null) {
    throw new InvalidInputError(
      'credits',
      "keygate/next cannot bill: a middleware never sees the route's status, so it could neither settle nor release a hold; wrap the billed route handler in withApiKeyAuth from keygate/fetch with its credits option",
    );
  }
  const { store, auth, respond, clientIp, onDenied } = resolveAdapterOptions(given, 'apiKeyMiddleware', NEXT_OWN);
  const { secret, paths } = given;
  const signing = importSecret(secret);
  const inScope = compilePaths(paths);
  const deny = createFetchDenier(respond, onDenied);
  const resolveIp = clientIp ?? platformIp;

  return async function apiKeyMiddleware(request) {
    const forwarded = withoutSignedKey(request.headers);
    if (!inScope(request.nextUrl.pathname)) {
      return forwarded ? NextResponse.next({ request: { headers: forwarded } }) : NextResponse.next();
    }
    const ip = await readAddress(resolveIp, request);
    const asked: AdapterRequest<NextRequest> = { headers: request.headers, ip, native: request };
    const result = await authenticate(asked, store, auth);
    if (!result.ok) return deny(result, request);
    const headers = forwarded ?? new Headers(request.headers);
    headers.set(SIGNED_KEY_HEADER, await signKey(await signing, result.key, Date.now()));
    const response = NextResponse.next({ request: { headers } });
    if (result.rateLimit) {
      for (const [name, value] of Object.entries(rateLimitHeaderFields(result.rateLimit))) {
        response.headers.set(name, value);
      }
    }
    return response;
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
export { clientIp, type NextClientIpResolver } from './client-ip.js';
export { type ApiKeyFromHeadersOptions, apiKeyFromHeaders } from './from-headers.js';
export type { PathPattern } from './paths.js';
export { SIGNED_KEY_HEADER } from './signed-key.js';
