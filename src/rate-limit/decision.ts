import type { PublicKey } from '../types.js';
import { DENIALS } from '../vocabulary/denials.js';
import type { RateLimitDecision } from '../vocabulary/rate-limiter.js';
import type { AuthFailure } from '../vocabulary/result.js';

// What the one-limit step (step.ts) and the many-limit step (many.ts) both make of a limiter's answer.

/** 503 `rate_limiter_unavailable` for `key`. @internal */
export function unavailable(key: PublicKey): AuthFailure {
  const d = DENIALS.rate_limiter_unavailable;
  return { ok: false, status: d.status, code: 'rate_limiter_unavailable', message: d.detail, key };
}

const isCount = (n: unknown): n is number => typeof n === 'number' && n >= 0 && n < Number.POSITIVE_INFINITY;

/** Whether a limiter's answer can be written as header fields (a custom limiter's garbage cannot). @internal */
export const isDecision = (d: RateLimitDecision): boolean =>
  typeof d?.allowed === 'boolean' && isCount(d.limit) && isCount(d.remaining) && isCount(d.resetMs);
