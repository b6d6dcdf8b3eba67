import { withCredits } from '../credits/step.js';
import { withRateLimit } from '../rate-limit/step.js';
import { secondsSince } from '../telemetry/telemetry.js';
import type { KeyStore } from '../types.js';
import { capabilityOf } from '../vocabulary/capabilities.js';
import type { AuthRequest, AuthResult } from '../vocabulary/result.js';
import { decide } from './decide.js';
import { type AuthenticateOptions, NO_OPTIONS, type ResolvedOptions, resolveAuthOptions } from './options.js';
import { throttled } from './throttled.js';

export type { CreditOptions } from '../credits/options.js';
export type { RateLimitOptions } from '../rate-limit/options.js';
export type { HeldCredits } from '../vocabulary/credit-ledger.js';
export type { AuthFailure, AuthRequest, AuthResult, AuthSuccess } from '../vocabulary/result.js';
export type { AuthenticateOptions, ResolvedOptions } from './options.js';
export { resolveAuthOptions } from './options.js';

// Whether the shared limiter is failing and this process is counting alone (FallbackRateLimiter is `degradable`).
function degraded(o: ResolvedOptions): boolean {
  return capabilityOf(o.rateLimit?.answering?.limiter, 'degradable')?.degraded === true;
}

function observed(result: AuthResult, request: AuthRequest, o: ResolvedOptions, start: number): AuthResult {
  if (o.telemetry) {
    o.telemetry.auth(result, secondsSince(start), request.ip);
    // Only an allow or a 429 `rate_limited` carries `rateLimit` (see src/rate-limit/step.ts).
    if (result.rateLimit) o.telemetry.rateLimit(result.ok, degraded(o));
  }
  if (o.onResult) {
    try {
      o.onResult(result, request);
    } catch {
      // An observer never changes an outcome.
    }
  }
  return result;
}

/**
 * {@link authenticate} for adapters that can carry on synchronously: the same checks, options and
 * result, but the result itself when no I/O was needed (a cached key, a remembered unknown key, a
 * missing or malformed one, with Node's synchronous digest) and a Promise only when the store has to
 * be asked or, with `credits`, a live key's request that costs something is held. Frameworks charge
 * for every asynchronous step of a middleware; this lets an adapter call `next()` at once on the cached path. Never throws for anything a client sends; bad options throw.
 *
 * @example
 * const r = authenticateEager({ headers: req.headers, ip: req.ip }, store, options);
 * if ('then' in r) r.then(finish); else finish(r);
 */
export function authenticateEager(
  request: AuthRequest,
  store: KeyStore,
  options: AuthenticateOptions = NO_OPTIONS,
): AuthResult | Promise<AuthResult> {
  const o = resolveAuthOptions(options);
  // The clock is read only when telemetry wants a duration.
  const start = o.telemetry ? performance.now() : 0;
  let result = o.throttle ? throttled(request, store, o, o.throttle) : decide(request, store, o);
  if (o.rateLimit) result = withRateLimit(result, request, o.rateLimit);
  if (o.credits) result = withCredits(result, request, o.credits, o.telemetry);
  return 'then' in result ? result.then((r) => observed(r, request, o, start)) : observed(result, request, o, start);
}

/**
 * Authenticates one request by its API key. Checks run in the contract's order and the first that
 * fails decides: missing (401), malformed (401, no store lookup), store failure or timeout (503,
 * never an allow), unknown (401), revoked (401), expired (401), address outside a non-empty allow
 * list (403), missing permission (403), and with `options.rateLimit` a key over its rate limit (429,
 * the result carrying `rateLimit`), and with `options.credits` a live key whose account cannot cover
 * the request's cost (402; else the result carries the hold as `credits`, which the caller settles
 * with `ledger.settle(holdId)` once it has answered, or releases). With `options.throttle`, an address over its failed-attempt
 * limit is refused first (429), and every 401 counts against it. Never throws for anything a client sends.
 *
 * @example
 * const result = await authenticate({ headers: req.headers, ip: req.ip }, store, { permissions: ['email:verify'] });
 * if (!result.ok) return reply(result.status, result.code);
 * result.key.accountId; // 'acct_1'
 */
export function authenticate(
  request: AuthRequest,
  store: KeyStore,
  options: AuthenticateOptions = NO_OPTIONS,
): Promise<AuthResult> {
  try {
    const result = authenticateEager(request, store, options);
    return 'then' in result ? result : Promise.resolve(result);
  } catch (error) {
    return Promise.reject(error);
  }
}
