import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  type AuthenticateOptions,
  type AuthFailure,
  type AuthResult,
  authenticateEager,
  createDenialResponder,
  type KeyStore,
  type PublicKey,
  resolveAuthOptions,
} from 'keygate';

declare global {
  namespace Express {
    interface Request {
      /** The authenticated key's public view, set by keygate's `apiKeyAuth`. */
      apiKey?: PublicKey;
    }
  }
}

/** Options of the Express {@link apiKeyAuth} middleware. */
export interface ExpressApiKeyAuthOptions extends AuthenticateOptions {
  /** Where keys are looked up; usually a `CachedKeyStore`. */
  store: KeyStore;
  /** Seconds sent as `Retry-After` with a 503. Default `5`. */
  retryAfter?: number;
  /**
   * Replaces the problem+json denial by writing its own response to `res`. It gets no `next`; if it
   * throws, rejects or sends nothing, the standard denial is sent: a hook can never turn a denial into an allow.
   */
  onDenied?: (failure: AuthFailure, req: Request, res: Response) => void | Promise<void>;
}

/**
 * Express 4 and 5 middleware: authenticates the request's API key and sets `req.apiKey`, or answers
 * with RFC 9457 problem+json (401, 403 or 503). The client address is `req.ip`, so Express's
 * `trust proxy` setting decides whether `X-Forwarded-For` counts.
 *
 * @example
 * app.post('/v1/email/verify', apiKeyAuth({ store, permissions: ['email:verify'] }), (req, res) => {
 *   res.json({ account: req.apiKey?.accountId });
 * });
 */
export function apiKeyAuth(options: ExpressApiKeyAuthOptions): RequestHandler {
  const { store, onDenied, retryAfter, ...auth } = options ?? ({} as ExpressApiKeyAuthOptions);
  if (!store || typeof store.findByHash !== 'function')
    throw new TypeError('apiKeyAuth: options.store must be a KeyStore');
  resolveAuthOptions(auth);
  const respond = createDenialResponder({ header: auth.header, retryAfter });

  function sendDenial(failure: AuthFailure, res: Response): void {
    if (res.headersSent) return;
    const { status, headers, body } = respond(failure);
    res.writeHead(status, headers).end(body);
  }

  async function deny(failure: AuthFailure, req: Request, res: Response): Promise<void> {
    if (onDenied) {
      try {
        await onDenied(failure, req, res);
      } catch {
        // fall through to the standard denial
      }
    }
    // A hook that threw, or returned without answering, leaves the standard denial to send.
    sendDenial(failure, res);
  }

  function settle(result: AuthResult, req: Request, res: Response, next: NextFunction): void {
    if (result.ok) {
      req.apiKey = result.key;
      next();
    } else if (onDenied) {
      deny(result, req, res).catch(next);
    } else {
      sendDenial(result, res);
    }
  }

  // A cached key is judged synchronously, so `next()` runs in the same tick: no promise on the hot path.
  return function apiKeyAuth(req: Request, res: Response, next: NextFunction): void {
    let result: AuthResult | Promise<AuthResult>;
    try {
      result = authenticateEager({ headers: req.headers, ip: req.ip }, store, auth);
    } catch (error) {
      next(error);
      return;
    }
    if ('then' in result) result.then((r) => settle(r, req, res, next), next);
    else settle(result, req, res, next);
  };
}

export type { AuthFailure, PublicKey } from 'keygate';
