import { InvalidInputError } from '#errors';
import type { RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import type { RateLimitDecision, RateLimiter } from '../vocabulary/rate-limiter.js';
import { ExpiryHeap } from './expiry-heap.js';
import { consumeWindowMs } from './policy.js';

/**
 * Options of {@link MemoryRateLimiter}.
 *
 * @example
 * const options: MemoryRateLimiterOptions = { max: 10_000, clock: () => Date.now() };
 */
export interface MemoryRateLimiterOptions {
  /**
   * Most keys whose window this process remembers. When a new key arrives with all of them held,
   * an ended window is dropped first, else the least recently used key's (see the class notes).
   *
   * @default 100_000
   */
  max?: number;
  /**
   * Current time in epoch milliseconds.
   *
   * @default Date.now
   */
  clock?: () => number;
}

/**
 * A key's open window, for `LeasableMemoryRateLimiter`.
 * @internal
 */
export interface Window {
  /** Epoch milliseconds at which the window ends (exclusive). */
  end: number;
  used: number;
}

/**
 * A rate limiter for one process: each key's window lives in this process's memory, so counts are
 * exact within the process and not shared with others (use `RedisRateLimiter` or
 * `PostgresRateLimiter` for that).
 *
 * The algorithm is a fixed window anchored at a key's first request: a key's first request (when it
 * has no open window, whatever that request's outcome) opens a window of `windowMs`; within it at
 * most `limit` units are allowed; a request whose cost exceeds what remains is refused and counts
 * nothing. A span of `windowMs` straddling two windows may hold up to `2 * limit` units. A change of
 * `limit` applies at once; a change of `windowMs` from the key's next window.
 *
 * Memory is bounded by `max` keys. A new key beyond `max` first replaces a window that has ended;
 * only when every remembered window is still open does it replace the least recently used key's,
 * whose next request then opens a fresh window. So the bound is exact as long as at most `max` keys
 * have an open window at once; beyond that, an evicted key may get up to `limit` more units within
 * what would have been its window.
 *
 * @example
 * const limiter = new MemoryRateLimiter({ max: 100_000 });
 * const { allowed, remaining, resetMs } = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 */
export class MemoryRateLimiter implements RateLimiter {
  /** Most keys remembered at once. */
  readonly max: number;
  /** @internal */
  protected readonly clock: () => number;
  // Insertion order is recency: a key is deleted and set again on every use, so the first is the least recent.
  /** @internal */
  protected readonly windows = new Map<string, Window>();
  private readonly ends = new ExpiryHeap();
  // The most recently used key: already last in `windows`, so its next use need not move it.
  private newest: string | undefined;

  constructor(options: MemoryRateLimiterOptions = {}) {
    checkOptionNames(options, ['max', 'clock'], 'MemoryRateLimiter');
    const max = validWholeNumber('max', options.max ?? 100_000);
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new InvalidInputError('clock', 'clock must be a function returning epoch milliseconds');
    }
    this.max = max;
    this.clock = options.clock ?? Date.now;
  }

  /** Keys currently remembered (open and ended windows); never more than `max`. */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Counts `cost` units against `keyId`; see the class notes for the window rules.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    try {
      return Promise.resolve(this.consumeSync(keyId, limit, cost));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * `consume` without the promise, for callers on a hot path. Throws `InvalidInputError` for bad arguments.
   *
   * @example
   * const { allowed } = limiter.consumeSync('key_1', { limit: 10, windowMs: 1000 }, 1);
   */
  consumeSync(keyId: string, limit: RateLimit, cost: number): RateLimitDecision {
    const windowMs = consumeWindowMs(keyId, limit, cost);
    const units = limit.limit;
    const now = this.clock();
    const window = this.windowOf(keyId, windowMs, now);
    const allowed = window.used + cost <= units;
    if (allowed) window.used += cost;
    return {
      allowed,
      limit: units,
      remaining: Math.max(0, units - window.used),
      resetMs: Math.max(0, window.end - now),
    };
  }

  /** Forgets every window. */
  clear(): void {
    this.windows.clear();
    this.newest = undefined;
    this.ends.reset([]);
  }

  /**
   * The key's open window, opening one (and making room for it) when there is none, to end at `end`
   * (epoch ms; `now + windowMs` by default); marks the key most recent.
   * @internal
   */
  protected windowOf(key: string, windowMs: number, now: number, end = now + windowMs): Window {
    let window = this.windows.get(key);
    const moved = window === undefined || key !== this.newest;
    if (window !== undefined) {
      if (moved) this.windows.delete(key);
    } else if (this.windows.size >= this.max) this.evict(now);
    if (window === undefined || window.end <= now) {
      window ??= { end: 0, used: 0 };
      window.end = end;
      window.used = 0;
      this.ends.push({ end: window.end, key });
    }
    if (moved) {
      this.windows.set(key, window);
      this.newest = key;
    }
    if (this.ends.size > 2 * this.windows.size + 64) this.compact();
    return window;
  }

  /** Drops one key: one whose window has ended if there is any, else the least recently used. */
  private evict(now: number): void {
    for (let top = this.ends.peek(); top !== undefined && top.end <= now; top = this.ends.peek()) {
      this.ends.pop();
      // A heap entry is stale when its key was evicted or its window reopened since.
      if (this.windows.get(top.key)?.end === top.end) {
        this.drop(top.key);
        return;
      }
    }
    const oldest = this.windows.keys().next();
    if (!oldest.done) this.drop(oldest.value);
  }

  private drop(key: string): void {
    this.windows.delete(key);
    if (key === this.newest) this.newest = undefined;
  }

  /** Rebuilds the heap from the live windows once stale entries outnumber them. */
  private compact(): void {
    this.ends.reset([...this.windows].map(([key, w]) => ({ end: w.end, key })));
  }
}
