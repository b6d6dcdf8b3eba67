import { type Context, Elysia, ElysiaCustomStatusResponse, StatusMap } from 'elysia';
import type { AuthFailure, AuthSuccess, HeldCredits, PublicKey } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticateEager,
  type ClientAddress,
  createFetchDenier,
  finishCredits,
  isPromise,
  rateLimitHeaderFields,
  readAddress,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';

/**
 * Options of the Elysia {@link apiKeyAuth} plugin: the core options, `store` and `retryAfterMs`, plus
 * these. A `rateLimit.cost` or `credits.cost` function receives Elysia's context as `native`.
 *
 * @example
 * const options: ElysiaApiKeyAuthOptions = { store, permissions: ['email:verify'], clientIp: socketAddress };
 */
export interface ElysiaApiKeyAuthOptions extends AdapterOptions<Context> {
  /**
   * Where the client address comes from. Default: nowhere, so keys with an allow list get 403. Pass
   * {@link socketAddress} for the peer of the connection Bun accepted (`server.requestIP(request)`); a
   * header is safe only behind a proxy that overwrites it. If it throws, the address is unknown.
   */
  clientIp?: (context: Context) => ClientAddress | Promise<ClientAddress>;
  /**
   * Replaces the problem+json denial with its own `Response`. The route's handler never runs: if the
   * hook throws, rejects or returns something else, the standard denial is sent.
   */
  onDenied?: (failure: AuthFailure, context: Context) => Response | Promise<Response>;
}

/**
 * The address of the peer that opened the connection, as Bun's `server.requestIP(request)` gives it;
 * `undefined` where there is no server (`app.handle()`). For the `clientIp` option: a proxy in front
 * makes this the proxy's address.
 *
 * @example
 * app.use(apiKeyAuth({ store, clientIp: socketAddress }));
 */
export function socketAddress(context: Pick<Context, 'server' | 'request'>): string | undefined {
  return context.server?.requestIP(context.request)?.address ?? undefined;
}

// The status a handler answered with: its Response's, its `status(...)`'s, or `set.status` (a number or a name).
function statusOf(response: unknown, set: Context['set']): number {
  if (response instanceof Response) return response.status;
  if (response instanceof ElysiaCustomStatusResponse) return response.code;
  const status = set.status;
  return typeof status === 'number' ? status : (StatusMap[status as keyof typeof StatusMap] ?? 200);
}

/**
 * An Elysia plugin: authenticates the API key of every route registered after `.use()` on the same
 * instance (the hooks are `scoped`: routes before it, and the parent's other routes, are not guarded)
 * and gives the handler `apiKey`, the key's public view, or answers with RFC 9457 problem+json (401,
 * 402, 403, 429, 500 or 503). With `rateLimit`, a limited key's responses carry `RateLimit-Policy` and
 * `RateLimit`. With `credits`, `apiKeyCredits` is the hold, settled after the handler when its status
 * is below 500 and released on a 5xx or a thrown error, before the response is sent. The client address
 * comes only from `clientIp` (none by default). Bad options throw `InvalidInputError` here, naming the option.
 *
 * @example
 * new Elysia()
 *   .get('/health', () => 'ok')
 *   .use(apiKeyAuth({ store, permissions: ['email:verify'], clientIp: socketAddress }))
 *   .post('/v1/email/verify', ({ apiKey }) => ({ account: apiKey.accountId }))
 *   .listen(3000);
 */
export function apiKeyAuth(options: ElysiaApiKeyAuthOptions) {
  const { store, auth, respond, clientIp, onDenied } = resolveAdapterOptions(options, 'apiKeyAuth (Elysia)');
  const deny = createFetchDenier(respond, onDenied);
  // The holds of requests in flight, closed once: after the handler, or on its error.
  const holds = new WeakMap<Request, AuthSuccess>();

  async function close(request: Request, status: number): Promise<void> {
    const held = holds.get(request);
    if (held === undefined) return;
    holds.delete(request);
    await finishCredits(held, status, auth);
  }

  return (
    new Elysia()
      // Elysia reads each hook's source to decide what to put on the context; the context handed whole
      // to a function gets all of it, as the `clientIp` and `cost` functions may read any part.
      .resolve({ as: 'scoped' }, async function apiKeyAuth(context) {
        // Elysia awaits this resolver whatever it returns, but within it a synchronous address and a
        // cached key are taken as they come, without a promise of their own (as in every adapter).
        const address = readAddress(clientIp, context as Context);
        const ip = isPromise(address) ? await address : address;
        const request: AdapterRequest<Context> = { headers: context.request.headers, ip, native: context as Context };
        const eager = authenticateEager(request, store, auth);
        const result = isPromise(eager) ? await eager : eager;
        if (!result.ok) {
          // A status response ends the request here with this Response, whose status and headers win.
          const denial = await deny(result, context as Context);
          return new ElysiaCustomStatusResponse(denial.status as 401, denial);
        }
        if (result.rateLimit) Object.assign(context.set.headers, rateLimitHeaderFields(result.rateLimit));
        if (result.credits) holds.set(context.request, result);
        return { apiKey: result.key as PublicKey, apiKeyCredits: result.credits as HeldCredits | undefined };
      })
      .onAfterHandle({ as: 'scoped' }, async function settleCredits({ request, responseValue, set }) {
        await close(request, statusOf(responseValue, set));
      })
      .onError({ as: 'scoped' }, async function releaseCredits({ request }) {
        await close(request, 500);
      })
      // An error hook of the app's that answers first keeps the one above from running: a hold still
      // open once the response has gone never reached the end of its handler.
      .onAfterResponse({ as: 'scoped' }, async function releaseUnfinished({ request }) {
        await close(request, 500);
      })
  );
}

export type { AuthFailure, PublicKey } from 'keygate';
