import { sameWindow } from './lease-types.js';
import { MemoryRateLimiter } from './memory.js';

/**
 * The per-process counts of `FallbackRateLimiter`: a `MemoryRateLimiter` whose windows also take in
 * what the shared limiter last answered for each key, so that counting alone, while the shared
 * limiter fails, starts from the shared window as this process last saw it rather than from zero.
 * Bounded by `max` keys like any `MemoryRateLimiter`.
 *
 * @example
 * const local = new SeenWindows({ max: 100_000 });
 * local.see('key_1', 60_000, 100, 42_000); // the shared window holds 100 units and ends in 42 s
 * local.consumeSync('key_1', { limit: 100, windowMs: 60_000 }, 1).allowed; // false
 * @internal
 */
export class SeenWindows extends MemoryRateLimiter {
  /**
   * Takes in a shared limiter's answer for `keyId`: `used` units counted in a window that ends
   * `resetMs` milliseconds from now. The key's local window becomes that window (one that ends at
   * another time is replaced) and its count never goes below `used` (it stays higher when this
   * process counted more alone). An answer with nothing to take in (an ended window, a count below 0
   * or not a number) changes nothing.
   *
   * @example
   * local.see('key_1', 60_000, limit - decision.remaining, decision.resetMs);
   */
  see(keyId: string, windowMs: number, used: number, resetMs: number): void {
    if (!(resetMs > 0 && used >= 0)) return;
    const now = this.clock();
    const end = now + resetMs;
    const open = this.windows.get(keyId);
    // Another window than the shared one: it ends now, and opens again below as the shared one.
    if (open !== undefined && open.end > now && !sameWindow(open.end, end, windowMs)) open.end = now;
    const window = this.windowOf(keyId, windowMs, now, end);
    if (used > window.used) window.used = used;
  }
}
