import type { KeyRateLimit, PublicKey, RateLimit } from '../types.js';
import { DENIALS } from '../vocabulary/denials.js';
import type { RateLimitDecision, RateLimitState } from '../vocabulary/rate-limiter.js';
import { requestCost } from '../vocabulary/request-cost.js';
import type { AuthRequest, AuthResult, AuthSuccess } from '../vocabulary/result.js';
import { accountLimitOf } from './account.js';
import { isDecision, unavailable } from './decision.js';
import { answering } from './fallbacks.js';
import { countAll } from './many.js';
import type { ResolvedRateLimit } from './options.js';
import { planOf } from './plan.js';

// Check row 9: a request that passed rows 1 to 8 consumes its cost from its key's limit. Synchronous
// with a MemoryRateLimiter, and with a LeasedRateLimiter whose slice covers it, so a cached key stays
// free of promises; a result without a limit (a
// denial, a key with no limit of its own and no default) is returned as it came, allocating nothing.

// A decision that cannot be written as headers (a custom limiter's garbage) is a limiter fault: fail closed.
function decided(key: PublicKey, policy: RateLimit, d: RateLimitDecision): AuthResult {
  if (!isDecision(d)) return unavailable(key);
  const rateLimit: RateLimitState = {
    limit: d.limit,
    remaining: d.remaining,
    resetMs: d.resetMs,
    windowMs: policy.windowMs,
  };
  if (d.allowed) return { ok: true, status: 200, key, rateLimit } satisfies AuthSuccess;
  const r = DENIALS.rate_limited;
  return { ok: false, status: r.status, code: 'rate_limited', message: r.detail, key, rateLimit };
}

/**
 * Row 9 for one result: the result itself unless it is an allow for a limited key; then the allow
 * or a 429 `rate_limited`, each carrying `rateLimit`, or 503 `rate_limiter_unavailable` when the
 * limiter (or the cost function) failed and could not be stood in for. Never rejects.
 */
export function limitRate(
  result: AuthResult,
  request: AuthRequest,
  rl: ResolvedRateLimit,
): AuthResult | Promise<AuthResult> {
  if (!result.ok) return result;
  const key = result.key;
  const own = (key.rateLimit ?? rl.default) as KeyRateLimit | null;
  if (rl.account !== null || Array.isArray(own)) {
    const account = accountLimitOf(rl.account, key);
    if (account === undefined) return unavailable(key);
    if (own === null && account === null) return result;
    const cost = requestCost(rl.cost, request);
    return cost < 0 ? unavailable(key) : countAll(key, planOf(own, account), cost, rl.answering ?? answering(rl));
  }
  const policy = own as RateLimit | null;
  if (!policy) return result;
  const cost = requestCost(rl.cost, request);
  if (cost < 0) return unavailable(key);
  const { now, limiter } = rl.answering ?? answering(rl);
  if (now) {
    // A MemoryRateLimiter, or a leased slice that covers the request: decided with no promise.
    let d: RateLimitDecision | undefined;
    try {
      d = now.consumeNow(key.id, policy, cost);
    } catch {
      return unavailable(key);
    }
    if (d !== undefined) return decided(key, policy, d);
  }
  try {
    return limiter.consume(key.id, policy, cost).then(
      (d) => decided(key, policy, d),
      () => unavailable(key),
    );
  } catch {
    return unavailable(key);
  }
}

/**
 * {@link limitRate} after the checks of rows 1 to 8, whether they were decided at once or by a promise.
 *
 * @example
 * const result = o.rateLimit ? withRateLimit(decide(request, store, o), request, o.rateLimit) : decide(request, store, o);
 */
export function withRateLimit(
  result: AuthResult | Promise<AuthResult>,
  request: AuthRequest,
  rl: ResolvedRateLimit,
): AuthResult | Promise<AuthResult> {
  return 'then' in result ? result.then((r) => limitRate(r, request, rl)) : limitRate(result, request, rl);
}
