import { InvalidInputError, RateLimiterUnavailableError } from '#errors';
import { type EventHook, emitSafely } from '../events.js';
import type { RateLimit } from '../types.js';
import {
  CAPABILITIES,
  type Capabilities,
  type Capable,
  capabilityOf,
  type Degradable,
  type ImmediateLimiter,
} from '../vocabulary/capabilities.js';
import type { RateLimitDecision, RateLimiter } from '../vocabulary/rate-limiter.js';
import { withLimiterDeadline } from './deadline.js';
import { consumeWindowMs } from './policy.js';
import { SeenWindows } from './seen-windows.js';

/**
 * Options of {@link FallbackRateLimiter}.
 *
 * @example
 * const options: FallbackRateLimiterOptions = { limiter: new RedisRateLimiter({ client }), onLimiterError: 'deny' };
 */
export interface FallbackRateLimiterOptions {
  /** The shared limiter to ask first (`RedisRateLimiter`, `PostgresRateLimiter`, or your own). */
  limiter: RateLimiter;
  /**
   * What a request gets while the shared limiter fails: `'fallback'` decides with this process's
   * own counts (the key's own limit, counted locally); `'deny'` rejects with `RateLimiterUnavailableError`.
   *
   * @default 'fallback'
   */
  onLimiterError?: 'fallback' | 'deny';
  /** Receives `ratelimit.degraded`, once per episode of failure. Its failures never affect a request. */
  onEvent?: EventHook;
  /**
   * While the shared limiter is failing, one request per this many milliseconds tries it again; the
   * others are decided at once, so an outage never adds the shared limiter's timeout to every request.
   *
   * @default 1000
   */
  probeIntervalMs?: number;
  /**
   * Milliseconds after which a call of the shared limiter that has neither answered nor rejected
   * counts as a failure; `0` trusts the shared limiter's own deadline. A guard for limiters that do
   * not time out by themselves: keygate's own declare a `deadline` and reject within its `timeoutMs`.
   *
   * @default 0
   */
  timeoutMs?: number;
  /**
   * Keys the per-process limiter remembers: each key's shared window as last seen, and its count
   * while degraded.
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
 * A shared rate limiter with a per-process fallback. Every request asks the shared limiter; when it
 * fails or times out (rejects), the request is decided by a `MemoryRateLimiter` in this process with
 * the same limit, or refused with `RateLimiterUnavailableError` under `onLimiterError: 'deny'`.
 * The first failure starts an episode and emits one `ratelimit.degraded` event; during the episode
 * requests are decided locally at once, and one per `probeIntervalMs` tries the shared limiter
 * again; its first answer ends the episode (a later failure starts a new one, with a new event).
 *
 * While degraded each process counts alone, but not from zero: on from the key's shared window as
 * this process last saw it (each answer of the shared limiter it passes on: `limit - remaining` units
 * used, the window ending `resetMs` later; for a limiter that answers from a slice, a
 * `LeasedRateLimiter`'s `immediateLimits`, the slice's view, top-ups included, when a request falls
 * back). So in the window where the outage begins a process allows at most the limit in all, the
 * units it was allowed before the outage included, and a full limit in each window after: N processes
 * cut off from the shared limiter allow a key at most N times its limit per window. Over a
 * `LeasedRateLimiter`, add per process what its slice still held when its first request fell back
 * (less than that request's cost). In a window where the shared limiter answers again, it counts only
 * what it counted itself: the units allowed while it was out come on top of its limit there. It
 * remembers up to `max` keys' windows as last seen.
 *
 * It declares itself `degradable`, so that telemetry can tell requests decided while degraded.
 *
 * @example
 * const limiter = new FallbackRateLimiter({ limiter: new RedisRateLimiter({ client }), onEvent: console.log });
 * await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1); // never rejects for a Redis outage
 */
export class FallbackRateLimiter implements RateLimiter, Capable, Degradable {
  declare readonly [CAPABILITIES]: Capabilities;
  private readonly shared: RateLimiter;
  private readonly local: SeenWindows;
  // The shared limiter's answers from a slice (a LeasedRateLimiter's), which never reach `consume`.
  private readonly immediate: ImmediateLimiter | undefined;
  private readonly deny: boolean;
  private readonly onEvent: EventHook | undefined;
  private readonly probeIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly clock: () => number;
  private readonly name: string;
  private failing = false;
  private nextProbeAt = 0;
  // Bumped on every change of state, so that an answer to a request sent before the change cannot undo it.
  private generation = 0;

  constructor(options: FallbackRateLimiterOptions) {
    const shared = options?.limiter;
    if (typeof shared?.consume !== 'function') {
      throw new InvalidInputError('limiter', 'limiter must have consume(keyId, limit, cost)');
    }
    const mode = options.onLimiterError ?? 'fallback';
    if (mode !== 'fallback' && mode !== 'deny') {
      throw new InvalidInputError('onLimiterError', 'onLimiterError must be "fallback" or "deny"');
    }
    const probe = options.probeIntervalMs ?? 1000;
    if (typeof probe !== 'number' || !(probe >= 0) || !Number.isFinite(probe)) {
      throw new InvalidInputError('probeIntervalMs', 'probeIntervalMs must be a number of milliseconds >= 0');
    }
    const timeoutMs = options.timeoutMs ?? 0;
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= 2_147_483_647)) {
      throw new InvalidInputError('timeoutMs', 'timeoutMs must be a number of milliseconds >= 0');
    }
    this.shared = shared;
    this.timeoutMs = timeoutMs;
    this.clock = options.clock ?? Date.now;
    this.local = new SeenWindows({ max: options.max ?? 100_000, clock: this.clock });
    this.immediate = capabilityOf(shared, 'immediateLimits');
    this.deny = mode === 'deny';
    this.onEvent = options.onEvent;
    this.probeIntervalMs = probe;
    this.name = shared.constructor?.name || 'RateLimiter';
    this[CAPABILITIES] = { degradable: this };
  }

  /** True between a failure of the shared limiter and its next answer. */
  get degraded(): boolean {
    return this.failing;
  }

  /**
   * Asks the shared limiter, or decides locally while it fails (see the class notes). Rejects only
   * for bad arguments (`InvalidInputError`) and, under `'deny'`, with `RateLimiterUnavailableError`.
   *
   * @example
   * const { allowed } = await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1);
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    // A bad argument is the caller's bug, the same for either limiter: never an outage.
    const windowMs = consumeWindowMs(keyId, limit, cost);
    const now = this.clock();
    if (this.failing) {
      if (now < this.nextProbeAt) return this.without(undefined, keyId, limit, windowMs, cost);
      this.nextProbeAt = now + this.probeIntervalMs;
    }
    const generation = this.generation;
    let decision: RateLimitDecision;
    try {
      decision = await (this.timeoutMs > 0
        ? withLimiterDeadline(this.name, this.timeoutMs, () => this.shared.consume(keyId, limit, cost))
        : this.shared.consume(keyId, limit, cost));
    } catch (err) {
      if (err instanceof InvalidInputError) throw err;
      if (!this.failing && generation === this.generation) this.startEpisode();
      return this.without(err, keyId, limit, windowMs, cost);
    }
    if (this.failing && generation === this.generation) {
      this.failing = false;
      this.generation++;
    }
    if (!this.deny) this.local.see(keyId, windowMs, limit.limit - decision?.remaining, decision?.resetMs);
    return decision;
  }

  private startEpisode(): void {
    this.failing = true;
    this.generation++;
    const now = this.clock();
    this.nextProbeAt = now + this.probeIntervalMs;
    emitSafely(this.onEvent, {
      type: 'ratelimit.degraded',
      keyId: null,
      accountId: null,
      hint: null,
      at: new Date(now).toISOString(),
      limiter: this.name,
    });
  }

  /** The answer while the shared limiter is out: a local decision, or a refusal under `'deny'`. */
  private without(cause: unknown, keyId: string, limit: RateLimit, windowMs: number, cost: number): RateLimitDecision {
    if (!this.deny) {
      // A slice's view is fresher than the last answer that came through here (its top-ups never do).
      let view: RateLimitDecision | undefined;
      try {
        view = this.immediate?.consumeNow(keyId, limit, 0);
      } catch {}
      if (view) this.local.see(keyId, windowMs, limit.limit - view.remaining, view.resetMs);
      return this.local.consumeSync(keyId, limit, cost);
    }
    if (cause instanceof RateLimiterUnavailableError) throw cause;
    throw new RateLimiterUnavailableError(`${this.name} is failing; requests are refused until it answers`, cause);
  }
}
