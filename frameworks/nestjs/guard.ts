import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import type { AuthenticateOptions, AuthResult, AuthSuccess } from 'keygate';
import {
  type AdapterRequest,
  authenticateEager,
  createNodeHeaders,
  finishCredits,
  type NodeHeaderLines,
  rateLimitHeaderFields,
} from 'keygate/adapter-kit';
import { PERMISSIONS_KEY, PUBLIC_KEY } from './decorators.js';
import { ApiKeyDeniedException } from './denial.js';
import { type Platform, platformOf } from './platform.js';
import { KEYGATE, type Keygate } from './runtime.js';
import type { KeygateRequest } from './types.js';

// The header lines of the platform's request: Express's is Node's `IncomingMessage`, Fastify's holds it as `raw`.
function lines(req: KeygateRequest): NodeHeaderLines {
  const message = (req as { raw?: { rawHeaders?: string[] } }).raw ?? (req as { rawHeaders?: string[] });
  return { headers: req.headers, rawHeaders: message.rawHeaders };
}

// Requests this guard already judged: a route under the global guard and `UseGuards(ApiKeyGuard)`
// is authenticated (and rate-limited, and billed) once.
const judged = new WeakSet<object>();

/**
 * The guard `KeygateModule` registers on every route (`APP_GUARD`): authenticates the request's
 * API key with the module's options plus the route's `RequirePermissions`, skips `Public()` routes,
 * and sets `req.apiKey` (what `@ApiKey()` reads). A refused request throws
 * {@link ApiKeyDeniedException}, which the module's filter answers with keygate's problem+json
 * (401, 402, 403, 429, 500 or 503). A rate-limited key's responses carry `RateLimit-Policy` and
 * `RateLimit`. With `credits`, `req.apiKeyCredits` is the hold, settled when the response ends with
 * a status below 500 and released otherwise (a handler that threw gets Nest's 500). The client
 * address is the platform's `req.ip`/`request.ip`, so Express's `trust proxy` or Fastify's
 * `trustProxy` decides whether `X-Forwarded-For` counts. Only HTTP requests are judged: any other
 * context (microservice, WebSocket) is refused unless `Public()`.
 *
 * @example
 * ```ts
 * // With KeygateModule.forRoot({ store, globalGuard: false }), guard chosen controllers only:
 * @UseGuards(ApiKeyGuard)
 * @Controller('v1')
 * class VerifyController {}
 * ```
 */
export class ApiKeyGuard implements CanActivate {
  private readonly keygate: Keygate;
  private readonly reflector: Reflector;
  private readonly platform: () => Platform;
  private readonly headersOf: ReturnType<typeof createNodeHeaders>;
  // Per controller class, then handler: the core options of its route, or null for a Public() one.
  // A handler alone is no key: controllers that inherit a route from one base class share its
  // function, and each decides for itself (its own Public() and RequirePermissions()).
  private readonly routes = new WeakMap<object, WeakMap<object, AuthenticateOptions | null>>();

  /** @internal Nest constructs the guard, injecting the module's options, its Reflector and HTTP adapter. */
  constructor(keygate: Keygate, reflector: Reflector, host: HttpAdapterHost) {
    this.keygate = keygate;
    this.reflector = reflector;
    this.platform = platformOf(host);
    this.headersOf = createNodeHeaders(keygate.auth);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const auth = this.routeOf(context);
    if (auth === null) return true;
    if (context.getType() !== 'http') return false;
    const http = context.switchToHttp();
    const req = http.getRequest<KeygateRequest>();
    if (judged.has(req)) return true;
    judged.add(req);
    const res = http.getResponse<unknown>();
    const request: AdapterRequest<KeygateRequest> = { headers: this.headersOf(lines(req)), ip: req.ip, native: req };
    const result = authenticateEager(request, this.keygate.store, auth);
    if ('then' in result) return result.then((r) => this.settle(r, req, res, auth));
    return this.settle(result, req, res, auth);
  }

  private routeOf(context: ExecutionContext): AuthenticateOptions | null {
    const handler = context.getHandler();
    const owner = context.getClass();
    let handlers = this.routes.get(owner);
    if (handlers === undefined) {
      handlers = new WeakMap();
      this.routes.set(owner, handlers);
    }
    let auth = handlers.get(handler);
    if (auth === undefined) {
      const targets = [handler, owner];
      const open = this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_KEY, targets);
      const permissions = this.reflector.getAllAndMerge<string[]>(PERMISSIONS_KEY, targets);
      // narrow() keeps what it built per route object: this pair's own, made once here.
      auth = open ? null : permissions.length > 0 ? this.keygate.narrow({}, permissions) : this.keygate.auth;
      handlers.set(handler, auth);
    }
    return auth;
  }

  private settle(result: AuthResult, req: KeygateRequest, res: unknown, auth: AuthenticateOptions): true {
    if (!result.ok) throw new ApiKeyDeniedException(result, this.keygate.respond(result));
    req.apiKey = result.key;
    if (result.rateLimit) {
      const platform = this.platform();
      for (const [name, value] of Object.entries(rateLimitHeaderFields(result.rateLimit))) {
        platform.setHeader(res, name, value);
      }
    }
    if (result.credits) this.bill(result, req, res, auth);
    return true;
  }

  // The hold closes when the response ends (Nest's exception layer included, with a 5xx for a
  // handler that threw): its status decides, even if the client has gone.
  private bill(result: AuthSuccess, req: KeygateRequest, res: unknown, auth: AuthenticateOptions): void {
    req.apiKeyCredits = result.credits;
    const raw = this.platform().raw(res);
    const end = raw.end;
    raw.end = function endAndBill(this: unknown, ...args: unknown[]) {
      raw.end = end;
      void finishCredits(result, raw.statusCode, auth);
      return end.apply(this, args);
    };
  }
}
Injectable()(ApiKeyGuard);
Inject(KEYGATE)(ApiKeyGuard, undefined, 0);
Inject(Reflector)(ApiKeyGuard, undefined, 1);
Inject(HttpAdapterHost)(ApiKeyGuard, undefined, 2);
