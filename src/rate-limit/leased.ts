import { InvalidInputError } from '#errors';
import { LEASE_OPTIONS, LeaseEngine, type LeaseOptions } from '../leases/engine.js';
import { refillPoint } from '../leases/refill-point.js';
import { beginTake, type LeaseSlice, SliceStore } from '../leases/slice-store.js';
import type { RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import { capabilityOf } from '../vocabulary/capabilities.js';
import type {
  LeasableRateLimiter,
  RateLimitDecision,
  RateLimiter,
  RateLimitLease,
} from '../vocabulary/rate-limiter.js';
import { withLimiterDeadline } from './deadline.js';
import { sameWindow } from './lease-types.js';
import { consumeWindowMs, validConsumeArgs } from './policy.js';

/**
 * Options of {@link LeasedRateLimiter}.
 *
 * @example
 * const options: LeasedRateLimiterOptions = { limiter: new RedisRateLimiter({ client }), maxSlice: 300, divisor: 8 };
 */
export interface LeasedRateLimiterOptions extends LeaseOptions {
  /** The shared limiter to take slices from; it must declare the `leases` capability (keygate's all do). */
  limiter: RateLimiter;
  /**
   * The most units one slice holds (beyond what the request that takes it needs). A key far from its
   * limit costs one round trip per `maxSlice / 2` units (at most one per `maxSlice / 4` when its store
   * answers slowly); near the limit, it bounds the early refusal (see the class). The default leaves a
   * busy key (tens of thousands of requests a second in one process) enough units to outlast a store
   * round trip on a loaded machine.
   *
   * @default 300
   */
  maxSlice?: number;
  /**
   * Most keys whose slice this process keeps; the least recently used one's unspent units are given
   * back to make room.
   *
   * @default 10_000
   */
  max?: number;
}

interface Slice extends LeaseSlice {
  /** The backend's identity of the window the units belong to. */
  window: number;
  /** Local epoch ms by which the window has surely ended (send time of the take + its resetMs). */
  endsAt: number;
  limit: number;
  windowMs: number;
  /** Units counted in the backend and not yet spent by this process. */
  units: number;
  /** Units the backend had left after the latest take (what `remaining` adds to `units`). */
  remaining: number;
  // `taking` is also set while a background top-up is in flight (then `refilling` is the same
  // promise): the slice's units are still spent meanwhile, but a request they cannot cover waits.
}

/** A request gone to the store or waiting for another's take; `abandoned` once its deadline answered it. */
interface Waiting {
  abandoned: boolean;
}

// Whether a slice answers a request of `cost` now: taken for this limit, enough units, and a read
// (cost 0) only while its window lasts.
const covers = (slice: Slice, limit: number, windowMs: number, cost: number, now: number) =>
  slice.units >= cost && slice.limit === limit && slice.windowMs === windowMs && (cost > 0 || slice.endsAt > now);

/**
 * A rate limiter that takes slices of each key's window from a shared limiter in one round trip,
 * spends them in this process, and gives back what it did not spend (`close()`, a changed limit, a
 * slice evicted). Exact in the sense that matters: every unit it allows was counted in the shared
 * window first, so no limit is ever exceeded across any number of processes.
 *
 * A take grants at least what the request needs, at most `maxSlice` and `1/divisor` of what remains;
 * a slice running low is topped up in the background (`prefetch`), to `maxSlice - 1` units at most.
 * One take per key is in flight per process; requests its slice cannot cover wait for it. The price is early refusal: a request of cost `c` is refused only
 * when fewer than `c + (P - 1) * (maxSlice - 1)` units of the window are unspent, `P` the number of
 * processes holding slices (the other processes' slices are counted but not yet spent). An exact
 * limiter refuses below `c`.
 *
 * A slice belongs to its window and ends with it. A process that dies without `close()` loses its
 * slice (at most `maxSlice - 1` units) until the window ends. `remaining` in a decision is what this
 * process can see: the shared window's remaining plus its own slice.
 *
 * Outages add to the bound only what they strand. A take that timed out and is answered later (a
 * stalled connection delivers, a client sends its offline queue) is given back by the shared limiter
 * (keygate's do: see `BackendRateLimiter.take`), and a request whose caller had its answer (the
 * deadline) spends nothing when its take lands: a stall that ends strands nothing. Only an answer lost
 * with its connection (the take applied, its reply never delivered) strands its grant until the
 * window ends. After a take of a key fails or times out, this process's takes of that key ask only
 * what their request needs (no slack, no top-up) until one succeeds, so each connection lost with
 * takes in flight strands, per process and key, at most `max(c, maxSlice)` units plus the cost (at
 * least 1) of each request of the key whose take failed before the next success; the early-refusal
 * bound grows by what was stranded, until the window ends.
 *
 * @example
 * const limiter = new LeasedRateLimiter({ limiter: new RedisRateLimiter({ client }), maxSlice: 300 });
 * const auth = { rateLimit: { limiter } };
 * process.on('SIGTERM', () => limiter.close());
 */
export class LeasedRateLimiter extends LeaseEngine<RateLimiter> implements RateLimiter {
  readonly max: number;
  private readonly leases: LeasableRateLimiter;
  /** Each key's slice, the least recently used given back first once `max` keys hold one. */
  private readonly slices: SliceStore<Slice>;
  /**
   * Keys whose latest take failed or timed out (at most `max`, the oldest forgotten first). Such a
   * take may have been applied with its answer lost with its connection: until a take of the key
   * succeeds, its takes ask only what their request needs, so that lost answers strand at most one
   * slice of the key (see the class).
   */
  private readonly unsure = new Set<string>();

  constructor(options: LeasedRateLimiterOptions) {
    checkOptionNames(options, [...LEASE_OPTIONS, 'limiter', 'max'], 'LeasedRateLimiter');
    const leases = capabilityOf(options?.limiter, 'leases');
    if (!leases) throw new InvalidInputError('limiter', 'limiter must declare the leases capability');
    super(options, options.limiter, [300, 500, 1000], 'immediateLimits');
    this.leases = leases;
    this.max = validWholeNumber('max', options.max ?? 10_000);
    this.slices = new SliceStore<Slice>(this.max, (keyId, evicted) => void this.giveBack(keyId, evicted));
  }

  /** Unspent units this process holds for `keyId` in its open window (0 without a slice). */
  held(keyId: string): number {
    const slice = this.slices.get(keyId);
    return slice && slice.endsAt > this.clock() ? slice.units : 0;
  }

  /**
   * Counts `cost` units against `keyId` from this process's slice, taking a new slice from the
   * shared limiter when the slice cannot cover it. Rejects like the shared limiter.
   *
   * @example
   * await limiter.consume('key_1', { limit: 1000, windowMs: 60_000 }, 1); // { allowed: true, limit: 1000, remaining: 999, resetMs: 60000 }
   */
  consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    let args: ReturnType<typeof validConsumeArgs>;
    try {
      args = validConsumeArgs(keyId, limit, cost);
    } catch (err) {
      return Promise.reject(err);
    }
    // A request its slice covers answers at once; only one that goes to the store (or waits for
    // another request's take) runs under the deadline, so the common case arms no timer.
    const decision = this.consumeChecked(args.keyId, limit, args.windowMs, args.cost);
    if (decision) return Promise.resolve(decision);
    const request: Waiting = { abandoned: false };
    const answer = withLimiterDeadline('LeasedRateLimiter', this.timeoutMs, () =>
      this.consumeSlowly(args, limit, request),
    );
    answer.catch(() => {
      request.abandoned = true;
    });
    return answer;
  }

  /**
   * `consume` answered at once from this process's slice, or `undefined` when only the shared
   * limiter can answer (no slice, too few units, another window). Takes the next slice in the
   * background once the slice runs low. Declared as the `immediateLimits` capability: `authenticate`
   * asks it first, so a key far from its limit costs no promise. Its arguments are checked as
   * `consume` checks them (a negative or fractional cost throws `InvalidInputError`, nothing counted),
   * without allocating.
   *
   * @example
   * const decision = limiter.consumeNow('key_1', { limit: 1000, windowMs: 60_000 }, 1) ?? (await limiter.consume('key_1', { limit: 1000, windowMs: 60_000 }, 1));
   */
  consumeNow(keyId: string, limit: RateLimit, cost: number): RateLimitDecision | undefined {
    return this.consumeChecked(keyId, limit, consumeWindowMs(keyId, limit, cost), cost);
  }

  // `consumeNow` once its arguments are checked (`consume` checked them already); `windowMs` whole.
  private consumeChecked(
    keyId: string,
    limit: RateLimit,
    windowMs: number,
    cost: number,
  ): RateLimitDecision | undefined {
    const now = this.clock();
    const slice = this.current(keyId, limit.limit, windowMs, now);
    if (slice === undefined || !covers(slice, limit.limit, windowMs, cost, now)) return undefined;
    slice.units -= cost;
    if (slice.units <= slice.refillAt && slice.taking === undefined && this.prefetch) this.refill(keyId, limit, slice);
    return this.decision(slice, true, now);
  }

  /**
   * Tops the slice up in the background to `maxSlice - 1` units: what this process holds never
   * exceeds what one take would have given it, so the early-refusal bound stands.
   */
  private refill(keyId: string, limit: RateLimit, slice: Slice): void {
    const want = this.maxSlice - 1 - slice.units;
    slice.refillAt = -1;
    if (want < 1 || slice.remaining === 0 || this.unsure.has(keyId)) return;
    const sentAt = this.clock();
    const unitsAtSend = slice.units;
    let answered = false;
    const landed = (lease: RateLimitLease) => {
      answered = true;
      this.unsure.delete(keyId);
      // What went while the top-up was in flight sets how early the next one starts.
      const drain = Math.max(0, unitsAtSend - slice.units);
      // A new window opened: the old one's units ended with it.
      if (!sameWindow(lease.window, slice.window, slice.windowMs)) slice.units = 0;
      slice.window = lease.window;
      slice.endsAt = sentAt + lease.resetMs;
      slice.remaining = lease.remaining;
      slice.units += lease.granted;
      slice.refillAt = lease.granted > 0 ? refillPoint(slice.units, drain) : -1;
    };
    // Too late (past timeoutMs, which bounds the requests that wait for it): the units were counted,
    // so they go back rather than wait for the window to end.
    const late = (lease: RateLimitLease) => {
      answered = true;
      this.unsure.delete(keyId);
      void this.leases.giveBack(keyId, limit, lease.window, lease.granted).catch(() => {});
    };
    const ask = { need: 0, want, divisor: this.divisor };
    const landedThen = () => {
      slice.taking = undefined;
      // Failed, or not answered yet: its answer may be lost (a late one clears this).
      if (!answered) this.doubt(keyId);
      // Dropped meanwhile (closed, evicted, limit changed): what it holds goes back.
      return this.slices.get(keyId) !== slice ? this.giveBack(keyId, slice) : undefined;
    };
    slice.taking = this.refillIn(slice, () => this.leases.take(keyId, limit, ask), landed, late, landedThen);
  }

  private async consumeSlowly(
    args: ReturnType<typeof validConsumeArgs>,
    limit: RateLimit,
    request: Waiting,
  ): Promise<RateLimitDecision> {
    for (;;) {
      // Its caller was answered (the deadline passed while it waited): it spends and takes nothing.
      // What it returns goes nowhere.
      if (request.abandoned) return { allowed: false, limit: args.limit, remaining: 0, resetMs: 0 };
      const now = this.clock();
      const slice = this.current(args.keyId, args.limit, args.windowMs, now);
      if (slice?.taking) {
        await slice.taking;
        continue;
      }
      if (slice && covers(slice, args.limit, args.windowMs, args.cost, now)) {
        slice.units -= args.cost;
        return this.decision(slice, true, now);
      }
      return this.take(args.keyId, limit, args.cost, slice, request);
    }
  }

  /**
   * Gives every unspent unit back to the shared limiter and forgets the slices: call it on a clean
   * shutdown, after the last request. Never rejects (a unit that could not go back returns when its
   * window ends).
   *
   * @example
   * process.on('SIGTERM', async () => { await server.close(); await limiter.close(); });
   */
  async close(): Promise<void> {
    const slices = [...this.slices];
    this.slices.clear();
    // A background take still in flight gives the slice back itself once it lands (or times out);
    // close() waits for it at most timeoutMs, on a timer of its own.
    const refilling = this.refilled();
    await Promise.all(slices.map(([keyId, slice]) => (slice.refilling ? undefined : this.giveBack(keyId, slice))));
    await refilling;
  }

  /** The key's live slice for this limit, marked most recent; an ended or re-limited one is dropped. */
  private current(keyId: string, limit: number, windowMs: number, now: number): Slice | undefined {
    const slice = this.slices.get(keyId);
    if (slice === undefined) return undefined;
    if (!slice.taking && (slice.endsAt <= now || slice.limit !== limit || slice.windowMs !== windowMs)) {
      this.slices.delete(keyId);
      void this.giveBack(keyId, slice);
      return undefined;
    }
    this.slices.use(keyId, slice);
    return slice;
  }

  private async take(keyId: string, limit: RateLimit, cost: number, old: Slice | undefined, request: Waiting) {
    // This request owns the slice's leftover while its take is in flight, so nobody else spends it.
    const mine = old?.units ?? 0;
    const slice: Slice = old ?? {
      window: 0,
      endsAt: 0,
      limit: limit.limit,
      windowMs: Math.ceil(limit.windowMs),
      units: 0,
      remaining: limit.limit,
      refillAt: -1,
    };
    slice.units = 0;
    if (!old) this.slices.place(keyId, slice);
    const sentAt = this.clock();
    const finish = beginTake(slice);
    const need = cost - mine;
    // No slack while the key's latest take is unsure (a read of cost 0 asks for one unit).
    const want = this.unsure.has(keyId) ? Math.max(need, 1) : Math.max(need, this.maxSlice);
    let lease: RateLimitLease;
    try {
      lease = await this.leases.take(keyId, limit, { need, want, divisor: this.divisor });
    } catch (err) {
      slice.units += mine;
      finish();
      this.doubt(keyId);
      throw err;
    }
    this.unsure.delete(keyId);
    finish();
    const endsAt = sentAt + lease.resetMs;
    if (mine > 0 && !sameWindow(slice.window, lease.window, slice.windowMs)) {
      // A new window opened: the old one's units ended with it, so the need was understated; spend
      // from the grant if it covers the cost, else take again.
      Object.assign(slice, { window: lease.window, endsAt, remaining: lease.remaining, units: lease.granted });
      slice.refillAt = refillPoint(lease.granted, 0);
      return request.abandoned ? this.decision(slice, false, this.clock()) : this.consume(keyId, limit, cost);
    }
    slice.window = lease.window;
    slice.endsAt = endsAt;
    slice.remaining = lease.remaining;
    if (lease.granted === 0) {
      slice.units += mine;
      slice.refillAt = -1;
      return this.decision(slice, false, this.clock(), lease.resetMs);
    }
    slice.units += mine + lease.granted - cost;
    slice.refillAt = refillPoint(slice.units, 0);
    // Landed after its caller gave up: the request's share goes back rather than to nobody.
    if (request.abandoned) void this.leases.giveBack(keyId, limit, lease.window, cost).catch(() => {});
    return this.decision(slice, true, this.clock(), lease.resetMs);
  }

  /** A take of `keyId` failed or timed out: its next takes ask no slack until one succeeds. */
  private doubt(keyId: string): void {
    if (!this.unsure.has(keyId) && this.unsure.size >= this.max) {
      const oldest = this.unsure.values().next();
      if (!oldest.done) this.unsure.delete(oldest.value);
    }
    this.unsure.add(keyId);
  }

  private decision(slice: Slice, allowed: boolean, now: number, resetMs?: number): RateLimitDecision {
    return {
      allowed,
      limit: slice.limit,
      remaining: Math.min(slice.limit, slice.remaining + slice.units),
      resetMs: resetMs ?? Math.max(0, slice.endsAt - now),
    };
  }

  private async giveBack(keyId: string, slice: Slice): Promise<void> {
    const units = slice.units;
    slice.units = 0;
    if (units === 0 || slice.endsAt <= this.clock()) return;
    const limit = { limit: slice.limit, windowMs: slice.windowMs };
    await this.leases.giveBack(keyId, limit, slice.window, units).catch(() => {});
  }

  /** The shared limiter it takes slices from. */
  get limiter(): RateLimiter {
    return this.inner;
  }
}
