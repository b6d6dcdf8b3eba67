import type { KeygateEvent, KeygateEventType } from '../events.js';
import type { PublicKey } from '../types.js';
import type { KeyActivity, UsageBatch, UsageCount, UsageOutcome } from '../vocabulary/usage-store.js';
import { utcDay } from '../vocabulary/usage-store.js';

const DAY = 86_400_000;

/** One key's counts in this process since the last flush, and its latest allowed use. */
export interface KeyTally {
  readonly keyId: string;
  readonly accountId: string;
  readonly hint: string;
  /** Epoch milliseconds of the key's creation. */
  readonly createdMs: number;
  /** The UTC day (days since the epoch) `counts` belong to. */
  day: number;
  counts: Map<UsageOutcome, number>;
  /** Epoch milliseconds of the latest allowed request, 0 before the first. */
  lastUsedMs: number;
  /** The client address of that request. */
  lastIp: string | null;
  /** The newest `lastUsedMs` a flush has delivered. */
  flushedUsedMs: number;
}

/** Counts taken out for one flush: the batch, and the activity it reports per key. */
export interface TakenCounts {
  readonly batch: UsageBatch;
  readonly sentUsed: ReadonlyMap<string, number>;
}

/**
 * Per key, per UTC day and per outcome, in memory: what a flush sends. Recording is a map lookup and
 * an increment; a day that ends is set aside as finished counts.
 */
export class UsageCounts {
  private readonly tallies = new Map<string, KeyTally>();
  private finished: UsageCount[] = [];

  /** Counts one request of `key` with `outcome` at `now`; returns the key's tally. */
  count(key: PublicKey, outcome: UsageOutcome, now: number, ip: string | null): KeyTally {
    const day = Math.floor(now / DAY);
    let t = this.tallies.get(key.id);
    if (t === undefined) {
      t = {
        keyId: key.id,
        accountId: key.accountId,
        hint: key.hint,
        createdMs: Date.parse(key.createdAt),
        day,
        counts: new Map(),
        lastUsedMs: 0,
        lastIp: null,
        flushedUsedMs: 0,
      };
      this.tallies.set(key.id, t);
    } else if (t.day !== day) {
      this.closeDay(t, day);
    }
    t.counts.set(outcome, (t.counts.get(outcome) ?? 0) + 1);
    // A refused request (401, 403, 429) is counted but is no use of the key: "last used" stays put.
    if (outcome === 'allowed') {
      t.lastUsedMs = now;
      t.lastIp = ip;
    }
    return t;
  }

  private closeDay(t: KeyTally, day: number): void {
    this.finished.push(...countsOf(t));
    t.counts = new Map();
    t.day = day;
  }

  /** Counts recorded but not yet flushed, as the store would receive them. */
  pending(): UsageBatch {
    const counts: UsageCount[] = [...this.finished];
    const activity: KeyActivity[] = [];
    for (const t of this.tallies.values()) {
      counts.push(...countsOf(t));
      if (t.lastUsedMs > t.flushedUsedMs) {
        activity.push({ keyId: t.keyId, lastUsedAt: new Date(t.lastUsedMs).toISOString(), lastUsedIp: t.lastIp });
      }
    }
    return { counts, activity };
  }

  /** Takes the pending counts out, so that requests recorded during the write go to the next batch. */
  take(): TakenCounts {
    const batch = this.pending();
    this.finished = [];
    const sentUsed = new Map<string, number>();
    for (const t of this.tallies.values()) {
      t.counts = new Map();
      sentUsed.set(t.keyId, t.lastUsedMs);
    }
    return { batch, sentUsed };
  }

  /** The store has the batch: its activity need not be sent again. */
  delivered(taken: TakenCounts): void {
    for (const [id, used] of taken.sentUsed) {
      const t = this.tallies.get(id);
      if (t) t.flushedUsedMs = Math.max(t.flushedUsedMs, used);
    }
  }

  /** The store refused the batch: its counts go with the next one, added up exactly once. */
  putBack(taken: TakenCounts): void {
    this.finished.push(...taken.batch.counts);
  }
}

function countsOf(t: KeyTally): UsageCount[] {
  const day = utcDay(t.day * DAY);
  const out: UsageCount[] = [];
  for (const [outcome, count] of t.counts) out.push({ keyId: t.keyId, accountId: t.accountId, day, outcome, count });
  return out;
}

/**
 * An event about the tally's key at `now`: its id, account and hint, plus what the type needs.
 *
 * @example
 * onEvent(keyEvent('usage.spike', tally, now, { lastMinute: 900 }));
 */
export function keyEvent(
  type: KeygateEventType,
  t: KeyTally,
  now: number,
  extra: Partial<KeygateEvent> = {},
): KeygateEvent {
  return { type, keyId: t.keyId, accountId: t.accountId, hint: t.hint, at: new Date(now).toISOString(), ...extra };
}
