import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthFailure, HeldCredits, PublicKey } from 'keygate';
import type { AdapterOptions, AdapterRequest } from 'keygate/adapter-kit';

// The Fastify adapter's public types and its additions to Fastify's own (`request.apiKey`, `config.apiKey`).

/**
 * What a route may say in `config.apiKey`: `false` opts out (no key, never billed), `{ permissions }`
 * requires these on top of the plugin's own, `{ cost }` replaces the plugin's `credits.cost` on this
 * route (a batch route: `cost: ({ native }) => native.body.items.length`; the body is parsed by then).
 * Default (absent): the plugin's options.
 *
 * @example
 * app.get('/health', { config: { apiKey: false } }, handler);
 * app.post('/v1/batch', { config: { apiKey: { cost: ({ native }) => (native.body as Batch).emails.length } } }, handler);
 */
export type RouteApiKeyConfig =
  | false
  | {
      permissions?: readonly string[];
      cost?: number | ((request: AdapterRequest<FastifyRequest>) => number);
    };

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key's public view, set by keygate's `apiKeyAuth`; `null` on routes that opted out. */
    apiKey: PublicKey | null;
    /** With the `credits` option, the credits held for this request (settled or released when the reply is sent); else `null`. */
    apiKeyCredits: HeldCredits | null;
  }
  interface FastifyContextConfig {
    /** `false`: no key needed on this route. `{ permissions }`: required on top of the plugin's own; `{ cost }`: this route's credits. */
    apiKey?: RouteApiKeyConfig;
  }
}

/**
 * Options of the Fastify {@link apiKeyAuth} plugin: the core options, `store` and `retryAfterMs`, plus
 * this hook. A `rateLimit.cost` function receives the `FastifyRequest` in the `onRequest` hook, before
 * the body is parsed (read the URL, params or headers); a `credits.cost` function receives it in the
 * `preHandler` hook, after (it may read `native.body`).
 *
 * @example
 * const options: FastifyApiKeyAuthOptions = { store, permissions: ['email:read'], retryAfterMs: 10_000 };
 */
export interface FastifyApiKeyAuthOptions extends AdapterOptions<FastifyRequest> {
  /**
   * Replaces the problem+json denial by sending its own reply. It cannot continue the request: if it
   * throws, rejects or sends nothing, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}
