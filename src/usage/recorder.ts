import type { AuthRequest, AuthResult } from '../auth/result.js';
import { InvalidInputError } from '../errors.js';
import { type EventHook, emitSafely } from '../events.js';
import type { KeyActivity, UsageBatch, UsageCount, UsageOutcome, UsageStore } from './types.js';
import { isUsageStore, utcDay } from './types.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Options of the spike detector. */
export interface SpikeOptions {
  /** A minute is a spike when it has more than `factor` times the key's usual rate. Default `5`. */
  factor?: number;
  /** ...and at least this many requests. Default `60`. */
  minRequests?: number;
  /** No alarm before the key has this many minutes of history in this process. Default `10`. */
  warmupMinutes?: number;
}

/** Options of {@link UsageRecorder}. */
export interface UsageRecorderOptions {
  /** Where counts are flushed: a store with `addUsage` (MemoryKeyStore, PostgresKeyStore, RedisKeyStore, or a CachedKeyStore over one). */
  store: unknown;
  /** Milliseconds between flushes. Default `5_000`; `0` disables the timer (call `flush()` yourself, e.g. in a Worker's `waitUntil`). A crash loses at most one interval of counts. */
  interval?: number;
  /** Receives `auth.denied`, `usage.spike` and `key.rotation_due`. Its failures never affect a request. */
  onEvent?: EventHook;
  /** Spike detection settings, or `false` to turn it off. */
  spike?: SpikeOptions | false;
  /** Age in days from which a used key is reported as `key.rotation_due` (once a day per process). Default `90`. */
  rotationDays?: number;
  /** Current time in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

// Per key, in this process: counts since the last flush, activity, and the spike detector's state.
interface Tally {
  readonly keyId: string;
  readonly accountId: string;
  readonly hint: string;
  readonly createdMs: number;
  day: number;
  counts: Map<UsageOutcome, number>;
  lastUsedMs: number;
  lastIp: string | null;
  flushedUsedMs: number;
  minute: number;
  minuteCount: number;
  baseline: number;
  minutesSeen: number;
  rotationCheckedDay: number;
}

/**
 * Counts every authenticated request per key, per UTC day and per outcome, in memory, and flushes the
 * counts to the store at an interval. Plug it into any adapter or `authenticate` as `onResult`:
 * recording is a map lookup and a few integer increments; all I/O happens in `flush()`.
 *
 * @example
 * const usage = new UsageRecorder({ store, onEvent: (e) => console.log(e.type, e.keyId) });
 * app.use(apiKeyAuth({ store: cached, onResult: usage.record }));
 * process.on('SIGTERM', () => usage.close()); // flushes what is left
 */
export class UsageRecorder {
  private readonly store: UsageStore;
  private readonly tallies = new Map<string, Tally>();
  private finished: UsageCount[] = [];
  private readonly onEvent: EventHook | undefined;
  private readonly spike: Required<SpikeOptions> | false;
  private readonly rotationDays: number;
  private readonly now: () => number;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(options: UsageRecorderOptions) {
    if (!isUsageStore(options?.store)) {
      throw new InvalidInputError('store', 'store must keep usage (addUsage, getUsage, getActivity)');
    }
    this.store = options.store;
    this.onEvent = options.onEvent;
    this.now = options.now ?? Date.now;
    this.rotationDays = options.rotationDays ?? 90;
    this.spike =
      options.spike === false ? false : { factor: 5, minRequests: 60, warmupMinutes: 10, ...(options.spike ?? {}) };
    const interval = options.interval ?? 5_000;
    if (!Number.isInteger(interval) || interval < 0) {
      throw new InvalidInputError(
        'interval',
        `interval must be a whole number of milliseconds >= 0, got ${String(interval)}`,
      );
    }
    if (interval > 0) {
      this.timer = setInterval(() => {
        this.flush().catch(() => {});
      }, interval);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Records one result. Pass it as `onResult`; it is bound, so it can be passed around. */
  readonly record = (result: AuthResult, request: AuthRequest): void => {
    const key = result.key;
    const now = this.now();
    if (!result.ok && this.onEvent) {
      emitSafely(this.onEvent, {
        type: 'auth.denied',
        keyId: key?.id ?? null,
        accountId: key?.accountId ?? null,
        hint: key?.hint ?? null,
        at: new Date(now).toISOString(),
        code: result.code,
        ip: request.ip ?? null,
      });
    }
    if (!key) return;
    let t = this.tallies.get(key.id);
    if (!t) {
      t = {
        keyId: key.id,
        accountId: key.accountId,
        hint: key.hint,
        createdMs: Date.parse(key.createdAt),
        day: Math.floor(now / DAY),
        counts: new Map(),
        lastUsedMs: 0,
        lastIp: null,
        flushedUsedMs: 0,
        minute: Math.floor(now / MINUTE),
        minuteCount: 0,
        baseline: 0,
        minutesSeen: 0,
        rotationCheckedDay: -1,
      };
      this.tallies.set(key.id, t);
    }
    const day = Math.floor(now / DAY);
    if (day !== t.day) this.closeDay(t, day);
    const outcome: UsageOutcome = result.ok ? 'allowed' : result.code;
    t.counts.set(outcome, (t.counts.get(outcome) ?? 0) + 1);
    t.lastUsedMs = now;
    t.lastIp = request.ip ?? null;
    if (this.spike) {
      const minute = Math.floor(now / MINUTE);
      if (minute !== t.minute) this.closeMinutes(t, minute, now);
      t.minuteCount++;
    }
    if (result.ok && t.rotationCheckedDay !== day) {
      t.rotationCheckedDay = day;
      const ageDays = Math.floor((now - t.createdMs) / DAY);
      if (ageDays >= this.rotationDays) {
        emitSafely(this.onEvent, {
          type: 'key.rotation_due',
          keyId: t.keyId,
          accountId: t.accountId,
          hint: t.hint,
          at: new Date(now).toISOString(),
          ageDays,
        });
      }
    }
  };

  private closeDay(t: Tally, day: number): void {
    const dayText = utcDay(t.day * DAY);
    for (const [outcome, count] of t.counts) {
      this.finished.push({ keyId: t.keyId, accountId: t.accountId, day: dayText, outcome, count });
    }
    t.counts = new Map();
    t.day = day;
  }

  private closeMinutes(t: Tally, minute: number, now: number): void {
    const spike = this.spike as Required<SpikeOptions>;
    const n = t.minuteCount;
    // The minute that just ended is a spike if it is far above this key's own baseline.
    if (
      t.minutesSeen >= spike.warmupMinutes &&
      n >= spike.minRequests &&
      n > spike.factor * Math.max(t.baseline, 1) &&
      minute - t.minute === 1
    ) {
      emitSafely(this.onEvent, {
        type: 'usage.spike',
        keyId: t.keyId,
        accountId: t.accountId,
        hint: t.hint,
        at: new Date(now).toISOString(),
        lastMinute: n,
        baselinePerMinute: Math.round(t.baseline * 10) / 10,
      });
    }
    // Exponentially weighted baseline over minutes, idle minutes counting as zero (at most an hour of them).
    const alpha = 0.1;
    t.baseline = t.minutesSeen === 0 ? n : t.baseline * (1 - alpha) + n * alpha;
    const idle = Math.min(minute - t.minute - 1, 60);
    t.baseline *= (1 - alpha) ** Math.max(idle, 0);
    t.minutesSeen += 1 + Math.max(idle, 0);
    t.minute = minute;
    t.minuteCount = 0;
  }

  /** Counts recorded but not yet flushed, as the store would receive them. */
  pending(): UsageBatch {
    const counts: UsageCount[] = [...this.finished];
    const activity: KeyActivity[] = [];
    for (const t of this.tallies.values()) {
      const day = utcDay(t.day * DAY);
      for (const [outcome, count] of t.counts)
        counts.push({ keyId: t.keyId, accountId: t.accountId, day, outcome, count });
      if (t.lastUsedMs > t.flushedUsedMs) {
        activity.push({ keyId: t.keyId, lastUsedAt: new Date(t.lastUsedMs).toISOString(), lastUsedIp: t.lastIp });
      }
    }
    return { counts, activity };
  }

  /**
   * Sends everything recorded so far to the store. If the store fails, the counts are kept and sent
   * with the next flush; nothing is dropped. Concurrent calls are serialised.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushOnce());
    this.flushing = run.catch(() => {});
    return run;
  }

  private async flushOnce(): Promise<void> {
    const batch = this.pending();
    if (batch.counts.length === 0 && batch.activity.length === 0) return;
    // Take the counts out before the write, so requests recorded meanwhile go to the next batch.
    this.finished = [];
    const sentUsed = new Map<string, number>();
    for (const t of this.tallies.values()) {
      t.counts = new Map();
      sentUsed.set(t.keyId, t.lastUsedMs);
    }
    try {
      await this.store.addUsage(batch);
      for (const [id, used] of sentUsed) {
        const t = this.tallies.get(id);
        if (t) t.flushedUsedMs = Math.max(t.flushedUsedMs, used);
      }
    } catch (err) {
      this.finished.push(...batch.counts); // retried next time, added up exactly once
      throw err;
    }
  }

  /** Stops the timer and flushes what is left. Call it on shutdown. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
