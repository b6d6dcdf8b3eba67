import type { EventHook } from '../events.js';
import { capabilityOf } from '../vocabulary/capabilities.js';
import type { RateLimiter } from '../vocabulary/rate-limiter.js';
import { FallbackRateLimiter } from './fallback.js';
import { MemoryRateLimiter } from './memory.js';
import type { Answering, ResolvedRateLimit } from './options.js';

// Which limiter answers for a `rateLimit` option: a MemoryRateLimiter itself (asked synchronously; it
// never fails for an outage), or a shared limiter behind a per-process fallback. One fallback per
// shared limiter, mode, hook and guard: routes that share a limiter share its per-process counts and
// its episodes (one `ratelimit.degraded` per episode and limiter, not per route).

interface Fallback {
  readonly mode: 'fallback' | 'deny';
  readonly onEvent: EventHook | undefined;
  readonly guardMs: number;
  readonly limiter: FallbackRateLimiter;
}
const fallbacks = new WeakMap<RateLimiter, Fallback[]>();

function fallbackFor(rl: ResolvedRateLimit): FallbackRateLimiter {
  const { limiter: shared, onLimiterError: mode, onEvent, guardMs } = rl;
  const known = fallbacks.get(shared) ?? [];
  const found = known.find((f) => f.mode === mode && f.onEvent === onEvent && f.guardMs === guardMs);
  if (found) return found.limiter;
  const limiter = new FallbackRateLimiter({ limiter: shared, onLimiterError: mode, onEvent, timeoutMs: guardMs });
  fallbacks.set(shared, [...known, { mode, onEvent, guardMs, limiter }]);
  return limiter;
}

/**
 * Who answers for `rl`, made on first use and kept on it: a `MemoryRateLimiter` at once, every time;
 * a shared limiter through its fallback, after its `immediateLimits` (a `LeasedRateLimiter`'s slice).
 *
 * @example
 * const { now, limiter } = answering(o.rateLimit);
 */
export function answering(rl: ResolvedRateLimit): Answering {
  if (rl.answering) return rl.answering;
  const memory = rl.limiter instanceof MemoryRateLimiter ? rl.limiter : undefined;
  rl.answering = memory
    ? { now: { consumeNow: (keyId, limit, cost) => memory.consumeSync(keyId, limit, cost) }, limiter: memory }
    : { now: capabilityOf(rl.limiter, 'immediateLimits'), limiter: fallbackFor(rl) };
  return rl.answering;
}
