import type { RateLimitState } from './types.js';

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
 * The `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers) for a limited
 * key's state: `q` the limit, `w` the window, `r` the units remaining, `t` the time to reset. Seconds
 * are whole and rounded up: `w` is at least 1 (a 500 ms window reads `w=1`), and `t` is 0 only when
 * the window has already ended, so a client that waits `t` seconds always finds a fresh window.
 *
 * @example
 * rateLimitHeaders({ limit: 100, remaining: 99, resetMs: 59_500, windowMs: 60_000 });
 * // { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=60' }
 */
export function rateLimitHeaders(state: RateLimitState): RateLimitHeaderFields {
  const w = Math.max(1, Math.ceil(state.windowMs / 1000));
  const t = Math.max(0, Math.ceil(state.resetMs / 1000));
  return {
    'ratelimit-policy': `"default";q=${state.limit};w=${w}`,
    ratelimit: `"default";r=${Math.max(0, state.remaining)};t=${t}`,
  };
}

/**
 * Seconds a client should wait for a wait of `ms` milliseconds, for `Retry-After`: whole seconds,
 * rounded up, at least 1. The one rule for every `Retry-After` keygate sends (a 503, a throttled
 * 429, a rate-limited 429).
 *
 * @example
 * retryAfterSeconds(1200); // 2
 * retryAfterSeconds(0); // 1
 */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
