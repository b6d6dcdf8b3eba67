import type { PublicKey } from '../types.js';
import { DENIALS } from '../vocabulary/denials.js';
import type { RateLimitDecision, RateLimitPolicyState, RateLimitState } from '../vocabulary/rate-limiter.js';
import type { AuthResult } from '../vocabulary/result.js';
import { isDecision, unavailable } from './decision.js';
import type { Answering } from './options.js';
import { type Plan, type PlannedLimit, subjectOf } from './plan.js';

// Row 9 for a request held to several limits: each is counted in the plan's order (shortest window
// first) until one refuses; the request is allowed only when every one allowed it, and the most
// restrictive one decides what the result reports (the one that refused, else the one with the
// fewest units left).

function stateOf(p: PlannedLimit, d: RateLimitDecision): RateLimitPolicyState {
  return {
    name: p.name,
    scope: p.scope,
    limit: d.limit,
    remaining: d.remaining,
    resetMs: d.resetMs,
    windowMs: p.windowMs,
  };
}

function decide(key: PublicKey, policies: readonly RateLimitPolicyState[], refused: boolean): AuthResult {
  let top = policies[policies.length - 1] as RateLimitPolicyState;
  if (!refused) {
    for (const p of policies) {
      if (p.remaining < top.remaining || (p.remaining === top.remaining && p.resetMs > top.resetMs)) top = p;
    }
  }
  const { name, limit, remaining, resetMs, windowMs } = top;
  const rateLimit: RateLimitState = { limit, remaining, resetMs, windowMs, name, policies };
  if (!refused) return { ok: true, status: 200, key, rateLimit };
  const r = DENIALS.rate_limited;
  return { ok: false, status: r.status, code: 'rate_limited', message: r.detail, key, rateLimit };
}

// Adds one limit's decision to `policies`: the result once the request is decided (a refusal, a
// limiter's garbage), else undefined to go on to the next limit.
function counted(
  key: PublicKey,
  policies: RateLimitPolicyState[],
  p: PlannedLimit,
  d: RateLimitDecision,
): AuthResult | undefined {
  if (!isDecision(d)) return unavailable(key);
  policies.push(stateOf(p, d));
  return d.allowed ? undefined : decide(key, policies, true);
}

// The limits from `from` on, each answered at once when it can be and by the limiter otherwise.
async function countLater(
  key: PublicKey,
  plan: Plan,
  from: number,
  cost: number,
  answering: Answering,
  policies: RateLimitPolicyState[],
): Promise<AuthResult> {
  for (let i = from; i < plan.length; i++) {
    const p = plan[i] as PlannedLimit;
    const subject = subjectOf(key, p);
    const d =
      answering.now?.consumeNow(subject, p.policy, cost) ?? (await answering.limiter.consume(subject, p.policy, cost));
    const decided = counted(key, policies, p, d);
    if (decided) return decided;
  }
  return decide(key, policies, false);
}

/**
 * Counts `cost` against every limit of `plan` for `key` through the answering limiter: the allow or
 * the 429 `rate_limited`, carrying `rateLimit` with each counted limit in `policies`, or 503
 * `rate_limiter_unavailable` when the limiter failed. Synchronous while every limit is answered at once
 * (always with a `MemoryRateLimiter`). Never rejects.
 *
 * @example
 * countAll(key, planOf(key.rateLimit, null), 1, answering(rl));
 */
export function countAll(
  key: PublicKey,
  plan: Plan,
  cost: number,
  answering: Answering,
): AuthResult | Promise<AuthResult> {
  const policies: RateLimitPolicyState[] = [];
  try {
    // Synchronous while every limit is answered at once (always with a MemoryRateLimiter).
    for (let i = 0; i < plan.length; i++) {
      const p = plan[i] as PlannedLimit;
      const d = answering.now?.consumeNow(subjectOf(key, p), p.policy, cost);
      if (d === undefined) return countLater(key, plan, i, cost, answering, policies).catch(() => unavailable(key));
      const decided = counted(key, policies, p, d);
      if (decided) return decided;
    }
  } catch {
    return unavailable(key);
  }
  return decide(key, policies, false);
}
