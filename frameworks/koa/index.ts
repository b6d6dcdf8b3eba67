import type { AuthFailure, AuthResult, AuthSuccess, HeldCredits, PublicKey } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticateEager,
  createNodeDenier,
  createNodeHeaders,
  finishCredits,
  isPromise,
  rateLimitHeaderFields,
  resolveAdapterOptions,
  statusToBill,
} from 'keygate/adapter-kit';
import type { Context, Middleware, Next } from 'koa';

/**
 * What {@link apiKeyAuth} puts in `ctx.state`: `apiKey` is the key's public view; with the `credits`
 * option, `apiKeyCredits` is the hold of a request that holds credits.
 *
 * @example
 * const app = new Koa<ApiKeyState & { requestId: string }>();
 */
export interface ApiKeyState {
  /** The authenticated key's public view (no secret, no hash). */
  apiKey: PublicKey;
  /** With the `credits` option, the credits held for this request (settled or released when it ends). */
  apiKeyCredits?: HeldCredits;
}

/**
 * Options of the Koa {@link apiKeyAuth} middleware: the core options, `store` and `retryAfterMs`, plus
 * this hook. A `rateLimit.cost` or `credits.cost` function receives Koa's `ctx` as `native`
 * (`ctx.request.body` is there when a body parser ran before this middleware).
 *
 * @example
 * const options: KoaApiKeyAuthOptions = { store, permissions: ['email:verify'], retryAfterMs: 10_000 };
 */
export interface KoaApiKeyAuthOptions extends AdapterOptions<Context> {
  /**
   * Replaces the problem+json denial by setting `ctx.status` and `ctx.body` itself. It gets no `next`;
   * if it throws, rejects or sets no `ctx.body`, the standard denial is sent: a hook can never turn a
   * denial into an allow.
   */
  onDenied?: (failure: AuthFailure, ctx: Context) => void | Promise<void>;
}

const DONE = Promise.resolve();

/**
 * Koa 2 and 3 middleware: authenticates the request's API key and sets `ctx.state.apiKey`, or answers
 * with RFC 9457 problem+json (401, 402, 403, 429, 500 or 503). With `rateLimit`, a limited key's
 * responses carry `RateLimit-Policy` and `RateLimit` (set before `next()`). With `credits`,
 * `ctx.state.apiKeyCredits` is the hold, settled after `await next()` when `ctx.status` is below 500
 * and released on a 5xx or when a later middleware throws (the error is rethrown). The client address
 * is `ctx.ip`, so Koa's `app.proxy` (with `app.proxyIpHeader` and `app.maxIpsCount`) decides whether
 * `X-Forwarded-For` counts. Bad options throw `InvalidInputError` here, naming the option in `field`.
 *
 * @example
 * const app = new Koa();
 * app.use(apiKeyAuth({ store, permissions: ['email:verify'] }));
 * app.use((ctx) => {
 *   ctx.body = { account: ctx.state.apiKey.accountId };
 * });
 */
export function apiKeyAuth(options: KoaApiKeyAuthOptions): Middleware<ApiKeyState> {
  const { store, auth, respond, onDenied } = resolveAdapterOptions(options, 'apiKeyAuth (Koa)');
  const headersOf = createNodeHeaders(auth);
  const deny = createNodeDenier<[Context]>({
    respond,
    onDenied,
    answered: (ctx) => ctx.headerSent || ctx.respond === false || ctx.body != null,
    // Bytes as a Buffer: Koa would serialise a plain Uint8Array as JSON. The content type is set
    // first, so Koa adds none of its own.
    write: (denial, ctx) => {
      ctx.status = denial.status;
      ctx.set(denial.headers);
      ctx.body = Buffer.from(denial.body.buffer, denial.body.byteOffset, denial.body.byteLength);
    },
  });

  // The status the rest of the chain answered with decides: below 500 settles, a 5xx or a throw releases.
  // So does a 404 with no body, Koa's answer when nothing in the chain answered: no route, no charge.
  async function billed(result: AuthSuccess, ctx: Context, next: Next): Promise<void> {
    ctx.state.apiKeyCredits = result.credits;
    try {
      await next();
    } catch (error) {
      await finishCredits(result, 500, auth);
      throw error;
    }
    await finishCredits(result, statusToBill(ctx.status, ctx.body != null), auth);
  }

  function settle(result: AuthResult, ctx: Context, next: Next): Promise<void> {
    if (!result.ok) return deny(result, ctx) ?? DONE;
    ctx.state.apiKey = result.key;
    if (result.rateLimit) ctx.set({ ...rateLimitHeaderFields(result.rateLimit) });
    return result.credits ? billed(result, ctx, next) : next();
  }

  // A cached key is judged synchronously: the only promise on the hot path is the one `next()` returns.
  return function apiKeyAuth(ctx, next) {
    const request: AdapterRequest<Context> = {
      headers: headersOf({ headers: ctx.headers, rawHeaders: ctx.req.rawHeaders }),
      ip: ctx.ip,
      native: ctx as Context,
    };
    const result = authenticateEager(request, store, auth);
    return isPromise(result)
      ? result.then((r) => settle(r, ctx as Context, next))
      : settle(result, ctx as Context, next);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
