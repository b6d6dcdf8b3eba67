import type { RateLimitState } from '../vocabulary/rate-limiter.js';

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
 * A key held to several limits (`state.policies`) gets one list member per limit in each field, by
 * name: `RateLimit-Policy: "burst";q=100;w=1, "monthly";q=1000000;w=2592000`.
 *
 * @example
 * rateLimitHeaders({ limit: 100, remaining: 99, resetMs: 59_500, windowMs: 60_000 });
 * // { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=60' }
 */
export function rateLimitHeaders(state: RateLimitState): RateLimitHeaderFields {
  if (state.policies) return severalFields(state.policies);
  return {
    'ratelimit-policy': policyItem('default', state),
    ratelimit: stateItem('default', state),
  };
}

const policyItem = (name: string, s: Omit<RateLimitState, 'name'>) =>
  `"${name}";q=${s.limit};w=${Math.max(1, Math.ceil(s.windowMs / 1000))}`;
const stateItem = (name: string, s: Omit<RateLimitState, 'name'>) =>
  `"${name}";r=${Math.max(0, s.remaining)};t=${Math.max(0, Math.ceil(s.resetMs / 1000))}`;

// Several limits: one list member each, in the order they were counted (names are checked when the
// limits are written: letters, digits, `_`, `-`, `.`, nothing a quoted string must escape).
function severalFields(policies: NonNullable<RateLimitState['policies']>): RateLimitHeaderFields {
  let policy = '';
  let now = '';
  for (const p of policies) {
    policy += `${policy ? ', ' : ''}${policyItem(p.name, p)}`;
    now += `${now ? ', ' : ''}${stateItem(p.name, p)}`;
  }
  return { 'ratelimit-policy': policy, ratelimit: now };
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
