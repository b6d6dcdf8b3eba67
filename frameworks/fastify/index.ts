import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { type AuthResult, type AuthSuccess, InvalidInputError } from 'keygate';
import {
  type AdapterRequest,
  authenticateEager,
  createNodeDenier,
  createRouteOptions,
  finishCredits,
  holdCredits,
  rateLimitHeaderFields,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';
import { billedRoutes } from './credits.js';
import type { FastifyApiKeyAuthOptions, RouteApiKeyConfig } from './types.js';

async function plugin(fastify: FastifyInstance, options: FastifyApiKeyAuthOptions): Promise<void> {
  const { store, auth: all, respond, onDenied } = resolveAdapterOptions(options);
  // The key is checked before the body is parsed; its credits are held after (preHandler), so that a
  // `cost` function can read the body.
  const auth = all.credits ? { ...all, credits: null } : all;
  const narrow = createRouteOptions(auth);
  const billed = billedRoutes(all);
  function routeOptions(config: RouteApiKeyConfig | undefined, url: string) {
    if (config === undefined || config === false) return config === undefined ? auth : null;
    if (config === null || typeof config !== 'object') {
      throw new InvalidInputError('config.apiKey', `config.apiKey of ${url} must be false or { permissions, cost }`);
    }
    billed(config, url);
    return narrow(config, config.permissions);
  }
  // Sent as bytes: Fastify would append `; charset=utf-8` to a string's content type.
  const deny = createNodeDenier<[FastifyRequest, FastifyReply]>({
    respond,
    onDenied,
    answered: (_request, reply) => reply.sent,
    write: (denial, _request, reply) => reply.code(denial.status).headers(denial.headers).send(denial.body),
  });

  fastify.decorateRequest('apiKey', null);
  fastify.decorateRequest('apiKeyCredits', null);
  // A route added after the plugin is checked as it is added; an earlier one on its first request.
  fastify.addHook('onRoute', (route) => void routeOptions(route.config?.apiKey, route.url));

  // Callback style, so that a cached key lets the request through in the same tick (an async hook
  // costs Fastify a promise per request). A denial answers from the hook and never calls `done`.
  function settle(result: AuthResult, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    if (!result.ok) return void deny(result, request, reply)?.catch(done);
    request.apiKey = result.key;
    if (result.rateLimit) {
      const fields = rateLimitHeaderFields(result.rateLimit);
      reply.header('ratelimit-policy', fields['ratelimit-policy']).header('ratelimit', fields.ratelimit);
    }
    done();
  }

  fastify.addHook('onRequest', function apiKeyAuth(request, reply, done) {
    let result: AuthResult | Promise<AuthResult>;
    try {
      const routeAuth = routeOptions(request.routeOptions.config?.apiKey, request.url);
      if (routeAuth === null) return done();
      const asked: AdapterRequest<FastifyRequest> = { headers: request.headers, ip: request.ip, native: request };
      result = authenticateEager(asked, store, routeAuth);
    } catch (error) {
      return done(error as Error);
    }
    if ('then' in result) result.then((r) => settle(r, request, reply, done), done);
    else settle(result, request, reply, done);
  });

  if (!all.credits) return;
  const open = new WeakMap<FastifyRequest, [AuthSuccess, typeof all]>();
  fastify.addHook('preHandler', function apiKeyCredits(request, reply, done) {
    const config = request.routeOptions.config?.apiKey;
    const key = request.apiKey;
    if (config === false || !key) return done();
    const routeAuth = billed(config, request.url) as typeof all;
    const asked: AdapterRequest<FastifyRequest> = { headers: request.headers, ip: request.ip, native: request };
    const held = holdCredits({ ok: true, status: 200, key }, asked, routeAuth);
    const go = (r: AuthResult) => {
      if (!r.ok) return void deny(r, request, reply)?.catch(done);
      if (r.credits) open.set(request, [r, routeAuth]);
      request.apiKeyCredits = r.credits ?? null;
      done();
    };
    if ('then' in held) held.then(go, done);
    else go(held);
  });
  // The reply's status decides, once it is final: a thrown handler reaches here as Fastify's 500.
  fastify.addHook('onSend', function apiKeyBilling(request, reply, payload, done) {
    const hold = open.get(request);
    if (hold) void finishCredits(hold[0], reply.statusCode, hold[1]);
    open.delete(request);
    done(null, payload);
  });
}

/**
 * Fastify 4 and 5 plugin: one `onRequest` hook authenticates every route of the instance it is
 * registered on (and its child contexts), before the body is parsed; `request.apiKey` is the key's
 * public view. A route narrows with `config: { apiKey: { permissions: [...] } }` or opts out with
 * `config: { apiKey: false }`. With `credits`, a `preHandler` hook holds the cost once the body is
 * parsed (a route may set its own `cost` in `config.apiKey`), `request.apiKeyCredits` is the hold, and
 * it is settled when the reply is sent with a status below 500, released otherwise. The client address is `request.ip`, so Fastify's `trustProxy` decides
 * whether `X-Forwarded-For` counts. With `rateLimit`, a limited key's replies carry `RateLimit-Policy`
 * and `RateLimit`. Bad options throw `InvalidInputError` at `register`.
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
export type { FastifyApiKeyAuthOptions, RouteApiKeyConfig } from './types.js';
