import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import {
  type AuthenticateOptions,
  type AuthFailure,
  type AuthResult,
  authenticateEager,
  createDenialResponder,
  type DenialResponse,
  type KeyStore,
  type PublicKey,
  resolveAuthOptions,
} from 'keygate';

/**
 * What a route may say in `config.apiKey`: `false` opts out, `{ permissions }` requires these on top
 * of the plugin's own. Default (absent): the plugin's options.
 *
 * @example
 * app.get('/health', { config: { apiKey: false } }, handler);
 */
export type RouteApiKeyConfig = false | { permissions?: readonly string[] };

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key's public view, set by keygate's `apiKeyAuth`; `null` on routes that opted out. */
    apiKey: PublicKey | null;
  }
  interface FastifyContextConfig {
    /** `false`: no key needed on this route. `{ permissions }`: required on top of the plugin's own. */
    apiKey?: RouteApiKeyConfig;
  }
}

/**
 * Options of the Fastify {@link apiKeyAuth} plugin: the core options plus these.
 *
 * @example
 * const options: FastifyApiKeyAuthOptions = { store, permissions: ['email:read'], retryAfter: 10 };
 */
export interface FastifyApiKeyAuthOptions extends AuthenticateOptions {
  /** Where keys are looked up; usually a `CachedKeyStore`. */
  store: KeyStore;
  /** Seconds sent as `Retry-After` with a 503. Default `5`. */
  retryAfter?: number;
  /**
   * Replaces the problem+json denial by sending its own reply. It cannot continue the request: if it
   * throws, rejects or sends nothing, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

async function plugin(fastify: FastifyInstance, options: FastifyApiKeyAuthOptions): Promise<void> {
  const { store, onDenied, retryAfter, ...auth } = options ?? ({} as FastifyApiKeyAuthOptions);
  if (!store || typeof store.findByHash !== 'function') {
    throw new TypeError('apiKeyAuth: options.store must be a KeyStore');
  }
  const base = resolveAuthOptions(auth);
  const respond = createDenialResponder({ header: auth.header, retryAfter });
  // Per-route options, built once per route and keyed by the route's own `apiKey` object, which
  // Fastify keeps by reference in `request.routeOptions.config`.
  const perRoute = new WeakMap<object, AuthenticateOptions>();
  function routeOptions(config: RouteApiKeyConfig | undefined, url: string): AuthenticateOptions | null {
    if (config === undefined) return auth;
    if (config === false) return null;
    let narrowed = perRoute.get(config);
    if (narrowed) return narrowed;
    if (config === null || typeof config !== 'object') {
      throw new TypeError(`apiKeyAuth: config.apiKey of ${url} must be false or { permissions }`);
    }
    narrowed = { ...auth, permissions: [...new Set([...base.permissions, ...(config.permissions ?? [])])] };
    resolveAuthOptions(narrowed);
    perRoute.set(config, narrowed);
    return narrowed;
  }

  fastify.decorateRequest('apiKey', null);
  // Routes added after the plugin are checked as they are added, so a bad route config fails then;
  // earlier routes get theirs built on their first request.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    routeOptions(route.config?.apiKey, route.url);
  });

  // Sent as bytes: Fastify would append `; charset=utf-8` to a string's content type, and every
  // adapter must answer with the same headers. One buffer per denial code, made on first use.
  const bytes = new WeakMap<DenialResponse, Buffer>();
  function sendDenial(failure: AuthFailure, reply: FastifyReply): FastifyReply {
    const denial = respond(failure);
    let body = bytes.get(denial);
    if (!body) {
      body = Buffer.from(denial.body);
      bytes.set(denial, body);
    }
    return reply.code(denial.status).headers(denial.headers).send(body);
  }

  async function deny(failure: AuthFailure, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (onDenied) {
      try {
        await onDenied(failure, request, reply);
      } catch {
        // fall through to the standard denial
      }
      if (reply.sent) return;
    }
    sendDenial(failure, reply);
  }

  // Callback style, so that a cached key lets the request through in the same tick (an async hook
  // costs Fastify a promise per request). A denial answers from the hook and never calls `done`.
  function settle(result: AuthResult, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    if (result.ok) {
      request.apiKey = result.key;
      done();
    } else if (onDenied) {
      deny(result, request, reply).catch(done);
    } else {
      sendDenial(result, reply);
    }
  }

  fastify.addHook('onRequest', function apiKeyAuth(request, reply, done) {
    let result: AuthResult | Promise<AuthResult>;
    try {
      const routeAuth = routeOptions(request.routeOptions.config?.apiKey, request.url);
      if (routeAuth === null) return done();
      result = authenticateEager({ headers: request.headers, ip: request.ip }, store, routeAuth);
    } catch (error) {
      return done(error as Error);
    }
    if ('then' in result) result.then((r) => settle(r, request, reply, done), done);
    else settle(result, request, reply, done);
  });
}

/**
 * Fastify 4 and 5 plugin: one `onRequest` hook authenticates every route of the instance it is
 * registered on (and its child contexts), so a request is refused before its body is parsed; `request.apiKey` is the key's public view. A route
 * narrows with `config: { apiKey: { permissions: [...] } }` or opts out with `config: { apiKey: false }`.
 * The client address is `request.ip`, so Fastify's `trustProxy` decides whether `X-Forwarded-For`
 * counts. Bad options throw at `register`.
 *
 * @example
 * await app.register(apiKeyAuth, { store, permissions: ['email:read'] });
 * app.post('/v1/email/verify', { config: { apiKey: { permissions: ['email:verify'] } } }, async (request) => ({
 *   account: request.apiKey?.accountId,
 * }));
 * app.get('/health', { config: { apiKey: false } }, async () => 'ok');
 */
export const apiKeyAuth = fp(plugin, { name: 'keygate', fastify: '4.x || 5.x' });
export default apiKeyAuth;

export type { AuthFailure, PublicKey } from 'keygate';
