import { InvalidInputError } from '#errors';
import { type EventHook, emitSafely } from '../events.js';
import { createTelemetry, type Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import { capabilityOf } from '../vocabulary/capabilities.js';
import type { AuthFailure, AuthRequest, AuthResult } from '../vocabulary/result.js';
import type { UsageBatch, UsageStore } from '../vocabulary/usage-store.js';
import { type KeyTally, keyEvent, UsageCounts } from './counting.js';
import { SerialFlush } from './serial-flush.js';
import { SpikeDetector, type SpikeOptions } from './spikes.js';

export type { SpikeOptions } from './spikes.js';

const DAY = 86_400_000;

/** Options of {@link UsageRecorder}. */
export interface UsageRecorderOptions {
  /**
   * Where counts are flushed: a store that declares the `usage` capability (MemoryKeyStore,
   * PostgresKeyStore, RedisKeyStore, or a CachedKeyStore over one).
   */
  store: unknown;
  /**
   * Milliseconds between flushes; `0` disables the timer (call `flush()` yourself, e.g. in a Worker's
   * `waitUntil`). A crash loses at most one interval of counts. @default 5_000
   */
  intervalMs?: number;
  /** Receives `auth.denied`, `usage.spike` and `key.rotation_due`. Its failures never affect a request. @default undefined */
  onEvent?: EventHook;
  /** Spike detection settings, or `false` to turn it off. @default {} (on, with its defaults) */
  spike?: SpikeOptions | false;
  /** Age, in days, from which a used key is reported as `key.rotation_due` (once a day per process). @default 90 */
  rotationDays?: number;
  /** Current time in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /**
   * Where to report flushes: `keygate.usage.flush.lag` (seconds between the oldest count of a flush
   * and its write) and `keygate.usage.flush.failures`. @default undefined (none)
   */
  telemetry?: TelemetryOptions;
  /**
   * How long the store keeps usage counts, in milliseconds (at least a day): once a UTC day by
   * `clock`, at its first flush, the recorder deletes the counts of the days that ended longer ago
   * (`UsageStore.prune`; each key's last use stays). A prune that fails never fails the flush, and is
   * tried again at the next. `false` keeps every count (prune by hand: `keygate usage prune`).
   * @default 34_560_000_000 (400 days)
   */
  retainMs?: number | false;
}

const RECORDER_OPTIONS = ['store', 'intervalMs', 'onEvent', 'spike', 'rotationDays', 'clock', 'telemetry', 'retainMs'];

/** How long usage counts are kept by default: 400 days (a year and a month to compare it with), in milliseconds. */
const DEFAULT_RETAIN_MS = 400 * DAY;

/**
 * Counts every authenticated request per key, per UTC day and per outcome, in memory, and flushes the
 * counts to the store at an interval. Plug it into any adapter or `authenticate` as `onResult`:
 * recording is a map lookup and a few integer increments; all I/O happens in `flush()`. It also
 * reports denials, spikes of a key's traffic and keys due for rotation through `onEvent`, and once a
 * day deletes the store's counts older than `retainMs` (400 days).
 *
 * @example
 * const usage = new UsageRecorder({ store, onEvent: (e) => console.log(e.type, e.keyId) });
 * app.use(apiKeyAuth({ store: cached, onResult: usage.record }));
 * process.on('SIGTERM', () => usage.close()); // flushes what is left
 */
export class UsageRecorder {
  private readonly store: UsageStore;
  private readonly counts = new UsageCounts();
  private readonly spikes: SpikeDetector | undefined;
  private readonly flusher: SerialFlush;
  private readonly onEvent: EventHook | undefined;
  private readonly rotationDays: number;
  private readonly clock: () => number;
  private readonly telemetry: Telemetry | undefined;
  // When the oldest count not yet written was recorded (epoch ms), for the flush-lag metric.
  private pendingSince: number | undefined;
  // Per key, the UTC day its rotation reminder was last considered: once a day per process.
  private readonly remindedDay = new Map<string, number>();
  private readonly retainMs: number | false;
  // The UTC day (of `clock`) of the last prune that succeeded: one a day per recorder.
  private prunedDay: number | undefined;

  constructor(options: UsageRecorderOptions) {
    checkOptionNames(options, RECORDER_OPTIONS, 'UsageRecorder');
    const usage = capabilityOf(options?.store, 'usage');
    if (!usage) throw new InvalidInputError('store', 'store must keep usage (declare the usage capability)');
    this.store = usage;
    this.onEvent = options.onEvent;
    this.clock = options.clock ?? Date.now;
    this.rotationDays = options.rotationDays ?? 90;
    this.telemetry = createTelemetry(options.telemetry);
    this.retainMs =
      options.retainMs === false ? false : validWholeNumber('retainMs', options.retainMs ?? DEFAULT_RETAIN_MS, DAY);
    const emit = (event: Parameters<EventHook>[0]) => emitSafely(this.onEvent, event);
    this.spikes = options.spike === false ? undefined : new SpikeDetector(options.spike ?? {}, emit);
    this.flusher = new SerialFlush(
      () => this.flushOnce(),
      validWholeNumber('intervalMs', options.intervalMs ?? 5_000, 0),
    );
  }

  /** Records one result. Pass it as `onResult`; it is bound, so it can be passed around. */
  readonly record = (result: AuthResult, request: AuthRequest): void => {
    const now = this.clock();
    if (!result.ok && this.onEvent) this.reportDenial(result, request, now);
    if (!result.key) return;
    const tally = this.counts.count(result.key, result.ok ? 'allowed' : result.code, now, request.ip ?? null);
    this.pendingSince ??= now;
    this.spikes?.observe(tally, now);
    if (result.ok) this.remindRotation(tally, now);
  };

  private reportDenial(result: AuthFailure, request: AuthRequest, now: number): void {
    emitSafely(this.onEvent, {
      type: 'auth.denied',
      keyId: result.key?.id ?? null,
      accountId: result.key?.accountId ?? null,
      hint: result.key?.hint ?? null,
      at: new Date(now).toISOString(),
      code: result.code,
      ip: request.ip ?? null,
    });
  }

  private remindRotation(t: KeyTally, now: number): void {
    const day = Math.floor(now / DAY);
    if (this.remindedDay.get(t.keyId) === day) return;
    this.remindedDay.set(t.keyId, day);
    const ageDays = Math.floor((now - t.createdMs) / DAY);
    if (ageDays < this.rotationDays) return;
    emitSafely(this.onEvent, keyEvent('key.rotation_due', t, now, { ageDays }));
  }

  /** Counts recorded but not yet flushed, as the store would receive them. */
  pending(): UsageBatch {
    return this.counts.pending();
  }

  /**
   * Sends everything recorded so far to the store. If the store fails, the counts are kept and sent
   * with the next flush; nothing is dropped. Concurrent calls are serialised.
   */
  flush(): Promise<void> {
    return this.flusher.run();
  }

  private async flushOnce(): Promise<void> {
    const taken = this.counts.take();
    const since = this.pendingSince;
    this.pendingSince = undefined;
    if (taken.batch.counts.length === 0 && taken.batch.activity.length === 0) return this.pruneWhenDue();
    try {
      await this.store.addUsage(taken.batch);
      this.counts.delivered(taken);
      this.telemetry?.flush((this.clock() - (since ?? this.clock())) / 1000, false);
    } catch (err) {
      this.counts.putBack(taken);
      // The counts put back are as old as they were; newer ones recorded meanwhile are younger.
      if (since !== undefined) this.pendingSince = Math.min(since, this.pendingSince ?? since);
      this.telemetry?.flush(0, true);
      throw err;
    }
    await this.pruneWhenDue();
  }

  // The day's prune (`retainMs`), after the flush; a failure is tried again at the next flush.
  private async pruneWhenDue(): Promise<void> {
    if (this.retainMs === false) return;
    const day = Math.floor(this.clock() / DAY);
    if (this.prunedDay === day) return;
    try {
      await this.store.prune({ olderThanMs: this.retainMs });
      this.prunedDay = day;
    } catch {
      // Usage kept a little longer harms nothing; the counts were written.
    }
  }

  /** Stops the timer and flushes what is left. Call it on shutdown. */
  async close(): Promise<void> {
    this.flusher.stop();
    await this.flush();
  }
}
