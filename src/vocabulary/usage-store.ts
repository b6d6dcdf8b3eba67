import type { DenialCode } from './denials.js';
import type { PruneArgs, PruneResult } from './retention.js';

/** What happened to one authenticated request of a key: allowed, or the reason it was refused. */
export type UsageOutcome = 'allowed' | DenialCode;

/** A number of requests of one key on one UTC day with one outcome. Stores add these up. */
export interface UsageCount {
  readonly keyId: string;
  readonly accountId: string;
  /** UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly outcome: UsageOutcome;
  readonly count: number;
}

/**
 * When and from where a key was last used: its latest ALLOWED request. A refused request (a revoked
 * key's 401, an allow list's 403, a rate limit's 429) is counted under its outcome but never moves this.
 */
export interface KeyActivity {
  readonly keyId: string;
  /** ISO-8601. */
  readonly lastUsedAt: string;
  readonly lastUsedIp: string | null;
}

/** One flush of usage: counts to add and the newest activity per key. */
export interface UsageBatch {
  readonly counts: readonly UsageCount[];
  readonly activity: readonly KeyActivity[];
}

/**
 * The part of a store that keeps usage statistics. Counts are added, never overwritten, so several
 * processes flushing to one store add up exactly; activity keeps the newest `lastUsedAt` it is given
 * (the `UsageRecorder` sends allowed requests only). A store offers it by declaring the `usage`
 * capability (see `Capabilities` in `keygate/store-kit`).
 */
export interface UsageStore {
  addUsage(batch: UsageBatch): Promise<void>;
  /** Counts of one key for the UTC days `from` to `to` (inclusive, `YYYY-MM-DD`). */
  getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]>;
  getActivity(keyId: string): Promise<KeyActivity | null>;
  /**
   * Deletes the counts of every key for the UTC days that ended more than `olderThanMs` ago (a day
   * ends at the next midnight UTC), in batches; `deleted` counts (key, day, outcome) counts. Each
   * key's last use (`getActivity`) stays. The `UsageRecorder` runs it once a UTC day (`retainMs`,
   * 400 days by default); `keygate usage prune` runs it by hand.
   */
  prune(args: PruneArgs): Promise<PruneResult>;
}

/** Usage of one key over a range of days, as `KeyManager.usage` reports it. */
export interface UsageReport {
  readonly keyId: string;
  readonly from: string;
  readonly to: string;
  readonly allowed: number;
  readonly denied: number;
  /** Denials by reason, e.g. `{ ip_not_allowed: 3 }`. */
  readonly deniedBy: Readonly<Partial<Record<DenialCode, number>>>;
  /** One entry per UTC day that had traffic, oldest first. */
  readonly days: ReadonlyArray<{
    readonly day: string;
    readonly allowed: number;
    readonly denied: number;
    readonly deniedBy: Readonly<Partial<Record<DenialCode, number>>>;
  }>;
  /** The latest allowed request (ISO-8601), or null when the key was never allowed through. */
  readonly lastUsedAt: string | null;
  /** The client address of that request, or null. */
  readonly lastUsedIp: string | null;
}

/**
 * The UTC day of an epoch-millisecond time, `YYYY-MM-DD`.
 *
 * @example
 * utcDay(Date.parse('2026-11-22T23:59:59Z')) // '2026-11-22'
 */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
