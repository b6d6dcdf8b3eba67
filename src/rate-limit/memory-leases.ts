import type { RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { CAPABILITIES, type Capabilities, type Capable } from '../vocabulary/capabilities.js';
import type { LeasableRateLimiter, RateLimitLease, TakeRequest } from '../vocabulary/rate-limiter.js';
import { grantOf, sameWindow, validGiveBackArgs, validTakeArgs } from './lease-types.js';
import { MemoryRateLimiter, type MemoryRateLimiterOptions } from './memory.js';

/**
 * A `MemoryRateLimiter` that also declares the `leases` capability (`take`, `giveBack`), so a
 * `LeasedRateLimiter` can wrap it: for tests and for code that runs the same wiring with and without a
 * shared backend. In one process leases buy nothing; `MemoryRateLimiter` itself stays without them so
 * the root bundle does not carry them.
 *
 * @example
 * const limiter = new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter() });
 */
export class LeasableMemoryRateLimiter extends MemoryRateLimiter implements LeasableRateLimiter, Capable {
  /** Its `leases`: `take` and `giveBack`. */
  declare readonly [CAPABILITIES]: Capabilities;

  constructor(options: MemoryRateLimiterOptions = {}) {
    checkOptionNames(options, ['max', 'clock'], 'LeasableMemoryRateLimiter');
    super(options);
    this[CAPABILITIES] = { leases: this };
  }

  /**
   * Grants a slice of `keyId`'s open window (the `leases` capability; see `TakeRequest`).
   *
   * @example
   * await limiter.take('key_1', { limit: 100, windowMs: 1000 }, { need: 1, want: 50, divisor: 8 }); // granted 12
   */
  take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease> {
    try {
      const args = validTakeArgs(keyId, limit, ask);
      const now = this.clock();
      const window = this.windowOf(args.keyId, args.windowMs, now);
      const granted = grantOf(Math.max(0, args.limit - window.used), ask);
      window.used += granted;
      const remaining = Math.max(0, args.limit - window.used);
      return Promise.resolve({ granted, limit: args.limit, remaining, resetMs: window.end - now, window: window.end });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Uncounts `units` of the window `window` of `keyId` (the `leases` capability); nothing once it ended.
   *
   * @example
   * await limiter.giveBack('key_1', { limit: 100, windowMs: 1000 }, lease.window, 5);
   */
  giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void> {
    try {
      const args = validGiveBackArgs(keyId, limit, window, units);
      const open = this.windows.get(keyId);
      if (open !== undefined && sameWindow(open.end, window, args.windowMs) && open.end > this.clock()) {
        open.used = Math.max(0, open.used - args.cost);
      }
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
