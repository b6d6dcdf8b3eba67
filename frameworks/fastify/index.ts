import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import { type AuthenticateOptions, type AuthResult, type AuthSuccess, InvalidInputError } from 'keygate';
import {
  type AdapterRequest,
  authenticateEager,
  checkOptionNames,
  createNodeDenier,
  createNodeHeaders,
  createRouteOptions,
  finishCredits,
  holdCredits,
  rateLimitHeaderFields,
  resolveAdapterOptions,
  statusToBill,
} from 'keygate/adapter-kit';
import { billedRoutes } from './credits.js';
import type { FastifyApiKeyAuthOptions, RouteApiKeyConfig } from './types.js';

type Hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
type RouteHooks = onRequestHookHandler | onRequestHookHandler[] | undefined;
type Options = ReturnType<typeof resolveAdapterOptions>['auth'];

// What `config.apiKey` may hold, besides `false`.
const ROUTE_CONFIG_NAMES = ['permissions', 'cost'];

// Marks a route config whose route got its own hooks from `onRoute`, for the fallback hook to skip.
const ROUTED = Symbol('keygate.routed');
// A billed request's hold and the options it was held with, until its reply is sent: fields of the
// request (decorated, so every request has them from the start) rather than a WeakMap entry each.
const HELD = Symbol('keygate.held');
const HELD_WITH = Symbol('keygate.heldWith');
type Billed = FastifyRequest & { [HELD]: AuthSuccess | null; [HELD_WITH]: AuthenticateOptions | null };

// A route's hooks with `hook` first: keygate checks the key before the route's own onRequest hooks run.
function first(hook: Hook, hooks: RouteHooks): onRequestHookHandler[] {
  const own = hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
  return [hook as onRequestHookHandler, ...own];
}

async function plugin(fastify: FastifyInstance, options: FastifyApiKeyAuthOptions): Promise<void> {
  const { store, auth: all, respond, onDenied } = resolveAdapterOptions(options, 'apiKeyAuth (Fastify)');
  // The key is checked before the body is parsed; its credits are held after (preHandler), so that a
  // `cost` function can read the body.
  const auth = all.credits ? { ...all, credits: null } : all;
  const headersOf = createNodeHeaders(auth);
  const narrow = createRouteOptions(auth);
  const billed = billedRoutes(all);
  // Route configs whose members were checked: each once, when its route is added (or first seen).
  const checked = new WeakSet<object>();
  // A route's options: the plugin's, narrowed by its `config.apiKey`, or null when it opted out.
  function routeOptions(config: RouteApiKeyConfig | undefined, url: string) {
    if (config === undefined || config === false) return config === undefined ? auth : null;
    if (config === null || typeof config !== 'object') {
      throw new InvalidInputError('config.apiKey', `config.apiKey of ${url} must be false or { permissions, cost }`);
    }
    if (!checked.has(config)) {
      // A misspelt `permisions` would leave the route open to any valid key: refused, never ignored.
      checkOptionNames(config, ROUTE_CONFIG_NAMES, `config.apiKey of ${url}`, 'config.apiKey');
      checked.add(config);
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
  if (all.credits) {
    fastify.decorateRequest(HELD, null);
    fastify.decorateRequest(HELD_WITH, null);
  }

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

  function check(routeAuth: Options, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    let result: AuthResult | Promise<AuthResult>;
    try {
      const headers = headersOf({ headers: request.headers, rawHeaders: request.raw.rawHeaders });
      const asked: AdapterRequest<FastifyRequest> = { headers, ip: request.ip, native: request };
      result = authenticateEager(asked, store, routeAuth);
    } catch (error) {
      return done(error as Error);
    }
    if ('then' in result) result.then((r) => settle(r, request, reply, done), done);
    else settle(result, request, reply, done);
  }

  // Credits, held once the body is parsed (preHandler) and settled by the reply's final status.
  function opened(
    r: AuthResult,
    routeAuth: typeof all,
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    if (!r.ok) return void deny(r, request, reply)?.catch(done);
    if (r.credits) {
      (request as Billed)[HELD] = r;
      (request as Billed)[HELD_WITH] = routeAuth;
    }
    request.apiKeyCredits = r.credits ?? null;
    done();
  }
  function hold(routeAuth: typeof all, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const key = request.apiKey;
    if (!key) return done();
    const asked: AdapterRequest<FastifyRequest> = { headers: request.headers, ip: request.ip, native: request };
    const held = holdCredits({ ok: true, status: 200, key }, asked, routeAuth);
    if ('then' in held) held.then((r) => opened(r, routeAuth, request, reply, done), done);
    else opened(held, routeAuth, request, reply, done);
  }

  // Every route added from now on, in this context and its children: its options are resolved (and
  // checked) once, here, and it gets hooks of its own that hold them, so that a request reads nothing
  // to find them.
  fastify.addHook('onRoute', (route) => {
    const config = route.config?.apiKey;
    const routeAuth = routeOptions(config, route.url);
    route.config = { ...route.config, [ROUTED]: true } as typeof route.config;
    if (routeAuth === null) return;
    route.onRequest = first((request, reply, done) => check(routeAuth, request, reply, done), route.onRequest);
    if (!all.credits) return;
    const billing = billed(config, route.url) as typeof all;
    route.preHandler = first(
      (request, reply, done) => hold(billing, request, reply, done),
      route.preHandler as RouteHooks,
    ) as typeof route.preHandler;
  });

  // What `onRoute` never saw: a route added before the plugin, and the not-found handler (an unknown
  // URL is refused for its key like any route, so that a client without one cannot tell which routes
  // exist). One hook of the instance finds their options on each request (Fastify's `routeOptions`)
  // and lets every other request through at once to its route's own hooks. Routes added before the
  // plugin are rare: when there are none, only a not-found request pays for the lookup.
  const early = fastify.printRoutes().includes('(');
  type Config = { apiKey?: RouteApiKeyConfig; [ROUTED]?: true } | undefined;
  fastify.addHook('onRequest', function apiKeyAuth(request, reply, done) {
    if (!early && !request.is404) return done();
    const config = request.routeOptions.config as Config;
    if (config?.[ROUTED]) return done();
    let routeAuth: Options | null;
    try {
      routeAuth = routeOptions(config?.apiKey, request.url);
    } catch (error) {
      return done(error as Error);
    }
    if (routeAuth === null) return done();
    check(routeAuth, request, reply, done);
  });
  if (all.credits) {
    fastify.addHook('preHandler', function apiKeyCredits(request, reply, done) {
      if (!early && !request.is404) return done();
      const config = request.routeOptions.config as Config;
      if (config?.[ROUTED] || config?.apiKey === false) return done();
      hold(billed(config?.apiKey, request.url) as typeof all, request, reply, done);
    });
  }

  if (!all.credits) return;
  // The reply's status decides, once it is final: a thrown handler reaches here as Fastify's 500. A
  // request Fastify's not-found handler answered (`is404`) is released: no route, no charge.
  fastify.addHook('onSend', function apiKeyBilling(request, reply, payload, done) {
    const billed = request as Billed;
    const held = billed[HELD];
    if (held !== null) {
      const heldWith = billed[HELD_WITH] as AuthenticateOptions;
      billed[HELD] = null;
      billed[HELD_WITH] = null;
      void finishCredits(held, statusToBill(reply.statusCode, !request.is404), heldWith);
    }
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
