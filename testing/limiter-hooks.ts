import type { RateLimiter } from 'keygate';
import type { Expect } from './contract-kit.js';

/**
 * A limiter that creates its own table (`migrate()`), as the SQL limiters do.
 *
 * @example
 * const limiter: MigratableRateLimiter = new SqliteRateLimiter({ database });
 */
export type MigratableRateLimiter = RateLimiter & { migrate(): Promise<unknown> };

/**
 * What a fixture of {@link describeRateLimiterContract} may do around the limiter, so that the suite
 * checks what a backend stores and how it fails, not only what it answers. Each hook is optional; the
 * suite adds the cases of the hooks named in the options' `hooks`, and every fixture must then have them.
 *
 * @example
 * const hooks: RateLimiterHooks = { rowsOf: (keyId) => countRowsByHand(keyId), prune: () => limiter.prune() };
 */
export interface RateLimiterHooks {
  /** How many rows (or counters) the backend stores for `keyId`, read around the limiter. */
  rowsOf?(keyId: string): Promise<number>;
  /** Runs the limiter's `prune()` (deletes the rows of ended windows) and returns how many it deleted. */
  prune?(): Promise<number>;
  /**
   * A limiter with `timeoutMs` (in milliseconds) over a backend that never answers; `unstick` later
   * fails what the limiter waited on, as a connection reset would.
   */
  stalled?(timeoutMs: number): { limiter: RateLimiter; unstick(err: Error): void };
  /** A limiter whose client has been closed or ended. */
  ended?(): Promise<RateLimiter>;
  /** `count` limiters over one fresh database nobody has migrated, as that many processes would open it; `drop` removes it. */
  unmigrated?(count: number): Promise<{ limiters: MigratableRateLimiter[]; drop?(): Promise<void> }>;
  /**
   * A limiter with a short `timeoutMs` (500 ms or less) reached through a connection the test can cut (`cut`: the
   * backend becomes unreachable) and give back (`restore`).
   */
  severable?(): Promise<{ limiter: RateLimiter; cut(): Promise<void>; restore(): Promise<void> }>;
}

/**
 * The name of one of the {@link RateLimiterHooks}, as the options' `hooks` list them; `prune` stands
 * for `prune` with `rowsOf`.
 *
 * @example
 * const hooks: RateLimiterHook[] = ['prune', 'ended'];
 */
export type RateLimiterHook = keyof RateLimiterHooks;

/**
 * A fresh limiter for one test of {@link describeRateLimiterContract}, and how to move its time on.
 *
 * @example
 * let now = 0;
 * const fixture: LimiterFixture = { limiter: new MemoryRateLimiter({ clock: () => now }), advance: (ms) => { now += ms; } };
 */
export interface LimiterFixture extends RateLimiterHooks {
  limiter: RateLimiter;
  /** Moves the limiter's clock on by `ms` (limiters with an injected clock); without it, real time passes. */
  advance?: (ms: number) => void;
}

/** What a case of the rate-limiter contract works with: it opens its own fixture, as many as it needs. */
export interface LimiterContext {
  readonly open: () => Promise<LimiterFixture>;
  readonly expect: Expect;
  /** How long to wait for a window to end in real time, in milliseconds. */
  readonly patience: number;
}
