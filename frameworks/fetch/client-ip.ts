import type { ClientAddress } from 'keygate/adapter-kit';

// Where a Fetch handler's client address comes from: a `Request` carries none of its own.

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
) => ClientAddress | Promise<ClientAddress>;

/**
 * Ready-made resolvers for the `clientIp` option of `withApiKeyAuth`.
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
