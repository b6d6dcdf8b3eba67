import { validPruneArgs } from '../validate/prune.js';
import { validWholeNumber } from '../validate/whole.js';
import type { PruneArgs } from '../vocabulary/retention.js';

// Retention of closed holds: what `prune({ olderThanMs })` takes, and how often a shared ledger runs it
// by itself (its `pruneHoldsAfterMs` option).

/**
 * How long a shared SQL ledger keeps a closed hold before it prunes it by itself, in milliseconds: one
 * day (the longest a hold may live, so a hold's record outlasts any settle retried for it).
 *
 * @example
 * new PostgresCreditLedger({ client: pool }); // prunes holds closed more than DEFAULT_PRUNE_HOLDS_AFTER_MS ago
 */
export const DEFAULT_PRUNE_HOLDS_AFTER_MS = 86_400_000;

/**
 * The most hold records one statement of a prune deletes: a prune runs batches of this many, each
 * its own transaction under the ledger's deadline, until one deletes fewer.
 *
 * @example
 * const deleted = await this.pruneHolds(olderThanMs, PRUNE_HOLDS_BATCH);
 */
export const PRUNE_HOLDS_BATCH = 1_000;

// The longest a ledger waits between two prunes of its own: an hour (or `pruneHoldsAfterMs`, if shorter).
const MAX_PRUNE_EVERY_MS = 3_600_000;
// No hold is older than a century: a longer `olderThanMs` counts as one, so that no database is asked
// for a time before the years it can hold.
const MAX_OLDER_THAN_MS = 3_155_760_000_000;

/**
 * The checked options of a ledger's `prune`: as `validPruneArgs` (`keygate/store-kit`) checks them,
 * with an `olderThanMs` above a century counted as a century.
 *
 * @example
 * validHoldPruneArgs({ olderThanMs: 86_400_000 }) // { olderThanMs: 86400000 }
 * validHoldPruneArgs({ olderThanMs: -1 })        // throws InvalidInputError, field 'olderThanMs'
 */
export function validHoldPruneArgs(options: unknown): PruneArgs {
  const { olderThanMs } = validPruneArgs(options, 'CreditLedger.prune');
  return { olderThanMs: Math.min(olderThanMs, MAX_OLDER_THAN_MS) };
}

/**
 * The `pruneHoldsAfterMs` option of a shared ledger: absent, {@link DEFAULT_PRUNE_HOLDS_AFTER_MS};
 * `null` or `0`, `null` (the ledger never prunes by itself); else a whole number of milliseconds.
 * Anything else is an `InvalidInputError` naming `pruneHoldsAfterMs`.
 *
 * @example
 * validPruneHoldsAfterMs(undefined) // 86400000
 * validPruneHoldsAfterMs(0)         // null
 */
export function validPruneHoldsAfterMs(value: unknown): number | null {
  if (value === undefined) return DEFAULT_PRUNE_HOLDS_AFTER_MS;
  if (value === null || value === 0) return null;
  return validWholeNumber('pruneHoldsAfterMs', value);
}

/**
 * Runs a ledger's prune by itself, in the background: `due()` (called after a hold) starts one when
 * none is running and the last started at least `min(afterMs, 1 hour)` ago (the first at the first
 * hold), on a timer of 0 ms that does not keep a process alive, so the hold that called it does not
 * wait. A prune that fails is dropped: the next one is due an interval later. No timer runs between
 * holds, so nothing needs stopping.
 *
 * @example
 * const schedule = new PruneSchedule(86_400_000, () => ledger.prune({ olderThanMs: 86_400_000 }));
 * schedule.due(); // after each hold
 */
export class PruneSchedule {
  private readonly everyMs: number;
  private nextAtMs = Number.NEGATIVE_INFINITY;
  private running = false;

  constructor(
    afterMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly clock: () => number = Date.now,
  ) {
    this.everyMs = Math.min(afterMs, MAX_PRUNE_EVERY_MS);
  }

  /** Starts a prune in the background if one is due. */
  due(): void {
    if (this.running) return;
    const now = this.clock();
    if (now < this.nextAtMs) return;
    this.nextAtMs = now + this.everyMs;
    this.running = true;
    const timer = setTimeout(() => {
      this.run()
        .catch(() => {})
        .finally(() => {
          this.running = false;
        });
    }, 0);
    (timer as { unref?: () => void }).unref?.();
  }
}
