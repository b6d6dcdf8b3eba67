import type { RateLimitDecision, RateLimitState } from './types.js';

/**
 * The IETF httpapi rate-limit header fields of one response, by lower-case name (as every adapter writes them).
 *
 * @example
 * const fields: RateLimitHeaderFields = { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=60' };
 */
export interface RateLimitHeaderFields {
  /** `"default";q=<limit>;w=<window in seconds>` */
  readonly 'ratelimit-policy': string;
  /** `"default";r=<remaining>;t=<seconds until the window resets>` */
  readonly ratelimit: string;
}

/**
 * The `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers) for a
 * decision: `q` the limit, `w` the window, `r` the units remaining, `t` the time to reset. Seconds
 * are whole and rounded up: `w` is at least 1 (a 500 ms window reads `w=1`), and `t` is 0 only when
 * the window has already ended, so a client that waits `t` seconds always finds a fresh window.
 *
 * @example
 * rateLimitHeaders({ allowed: true, limit: 100, remaining: 99, resetMs: 59_500 }, 60_000);
 * // { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=60' }
 */
export function rateLimitHeaders(
  decision: RateLimitDecision | RateLimitState,
  windowMs: number,
): RateLimitHeaderFields {
  const w = Math.max(1, Math.ceil(windowMs / 1000));
  const t = Math.max(0, Math.ceil(decision.resetMs / 1000));
  return {
    'ratelimit-policy': `"default";q=${decision.limit};w=${w}`,
    ratelimit: `"default";r=${Math.max(0, decision.remaining)};t=${t}`,
  };
}

/**
 * Seconds a refused client should wait, for `Retry-After`: the time to reset rounded up, at least 1.
 *
 * @example
 * retryAfterSeconds({ allowed: false, limit: 10, remaining: 0, resetMs: 1200 }); // 2
 */
export function retryAfterSeconds(decision: RateLimitDecision | RateLimitState): number {
  return Math.max(1, Math.ceil(decision.resetMs / 1000));
}
