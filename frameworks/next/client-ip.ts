import type { ClientAddress } from 'keygate/adapter-kit';
import type { NextRequest } from 'next/server.js';

/**
 * Returns the client address of a request, or undefined when it is not known.
 *
 * @example
 * const fromProxy: NextClientIpResolver = (request) => request.headers.get('x-real-ip') ?? undefined;
 */
export type NextClientIpResolver = (request: NextRequest) => ClientAddress | Promise<ClientAddress>;

/**
 * The address the platform put on the request: `request.ip`, which Next.js 14 and some hosts set
 * (Next.js 15 removed it, and `next start` never sets it). Never a header a client can send.
 */
export function platformIp(request: NextRequest): ClientAddress {
  const ip = (request as { ip?: unknown }).ip;
  return typeof ip === 'string' ? ip : undefined;
}

/**
 * Ready-made resolvers for the `clientIp` option of `apiKeyMiddleware`.
 *
 * @example
 * export default apiKeyMiddleware({ store, secret, clientIp: clientIp.vercel });
 */
export const clientIp = {
  /**
   * Vercel's `X-Real-IP`, which Vercel's edge always overwrites with the connecting address (what
   * `ipAddress()` of `@vercel/functions` reads). Right on Vercel only: anywhere else a client can set
   * this header to any address it likes.
   *
   * @example
   * export default apiKeyMiddleware({ store, secret, clientIp: clientIp.vercel });
   */
  vercel(request: NextRequest): string | undefined {
    return request.headers.get('x-real-ip') ?? undefined;
  },
} as const;
