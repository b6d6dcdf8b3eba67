import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthFailure, AuthResult, AuthSuccess, HeldCredits, PublicKey } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticateEager,
  createNodeDenier,
  createNodeHeaders,
  finishCredits,
  rateLimitHeaderFields,
  resolveAdapterOptions,
  statusToBill,
} from 'keygate/adapter-kit';

declare global {
  namespace Express {
    interface Request {
      /** The authenticated key's public view, set by keygate's `apiKeyAuth`. */
      apiKey?: PublicKey;
      /** With the `credits` option, the credits held for this request (settled or released when it ends). */
      apiKeyCredits?: HeldCredits;
    }
  }
}

/**
 * Options of the Express {@link apiKeyAuth} middleware: the core options, `store` and `retryAfterMs`,
 * plus this hook. A `rateLimit.cost` function receives Express's `req` (`req.body` is there when a
 * body parser ran before this middleware).
 *
 * @example
 * const options: ExpressApiKeyAuthOptions = { store, permissions: ['email:verify'], retryAfterMs: 10_000 };
 */
export interface ExpressApiKeyAuthOptions extends AdapterOptions<Request> {
  /**
   * Replaces the problem+json denial by writing its own response to `res`. It gets no `next`; if it
   * throws, rejects or sends nothing, the standard denial is sent: a hook can never turn a denial into an allow.
   */
  onDenied?: (failure: AuthFailure, req: Request, res: Response) => void | Promise<void>;
}

/**
 * Express 4 and 5 middleware: authenticates the request's API key and sets `req.apiKey`, or answers
 * with RFC 9457 problem+json (401, 402, 403, 429, 500 or 503). With `rateLimit`, a limited key's responses
 * carry `RateLimit-Policy` and `RateLimit` (set before `next()`). With `credits`, `req.apiKeyCredits`
 * is the hold, settled when the response ends with a status below 500 and released otherwise. The client address is `req.ip`, so Express's
 * `trust proxy` setting decides whether `X-Forwarded-For` counts. Bad options throw
 * `InvalidInputError` here, naming the option in `field`.
 *
 * @example
 * app.post('/v1/email/verify', apiKeyAuth({ store, permissions: ['email:verify'] }), (req, res) => {
 *   res.json({ account: req.apiKey?.accountId });
 * });
 */
export function apiKeyAuth(options: ExpressApiKeyAuthOptions): RequestHandler {
  const { store, auth, respond, onDenied } = resolveAdapterOptions(options, 'apiKeyAuth (Express)');
  const headersOf = createNodeHeaders(auth);
  const deny = createNodeDenier<[Request, Response]>({
    respond,
    onDenied,
    answered: (_req, res) => res.headersSent,
    write: (denial, _req, res) => res.writeHead(denial.status, denial.headers).end(denial.body),
  });

  function settle(result: AuthResult, req: Request, res: Response, next: NextFunction): void {
    if (!result.ok) return void deny(result, req, res)?.catch(next);
    req.apiKey = result.key;
    if (result.rateLimit) res.set(rateLimitHeaderFields(result.rateLimit));
    if (result.credits) bill(result, req, res);
    next();
  }

  // The hold closes when the handler (or Express's error handler, with a 5xx) ends the response: its
  // status decides, even if the client has gone ('finish' never comes then, so `end` is watched). A 404
  // with no route matched (`req.route` unset: Express's own not-found answer) releases it.
  function bill(result: AuthSuccess, req: Request, res: Response): void {
    req.apiKeyCredits = result.credits;
    const end = res.end;
    res.end = function endAndBill(this: Response, ...args: unknown[]) {
      res.end = end;
      void finishCredits(result, statusToBill(res.statusCode, req.route !== undefined), auth);
      return end.apply(this, args as never);
    } as Response['end'];
  }

  // A cached key is judged synchronously, so `next()` runs in the same tick: no promise on the hot path.
  return function apiKeyAuth(req: Request, res: Response, next: NextFunction): void {
    let result: AuthResult | Promise<AuthResult>;
    try {
      const request: AdapterRequest<Request> = { headers: headersOf(req), ip: req.ip, native: req };
      result = authenticateEager(request, store, auth);
    } catch (error) {
      next(error);
      return;
    }
    if ('then' in result) result.then((r) => settle(r, req, res, next), next);
    else settle(result, req, res, next);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
