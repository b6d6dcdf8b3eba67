import { describeValue } from '../redact/describe.js';
import type { PruneArgs } from '../vocabulary/retention.js';
import { refuse } from './issues.js';
import { checkOptionNames } from './options.js';

const PRUNE_ARG_NAMES = ['olderThanMs'] as const;

/**
 * The arguments of a `prune` (`Outbox`, `AuditLog`, `UsageStore`), checked: an object whose only
 * member is `olderThanMs`, a non-negative finite number of milliseconds. Anything else throws
 * `InvalidInputError`: naming `olderThanMs` (reason `wrong_type` for a value that is not a number,
 * `out_of_range` for a negative, infinite or NaN one), or the unknown member (`unknown_option`).
 * For authors of backends over other databases.
 *
 * @param where what is pruned, for the messages (`'AuditLog.prune'`)
 * @example
 * validPruneArgs({ olderThanMs: 86_400_000 }, 'Outbox.prune') // { olderThanMs: 86_400_000 }
 * validPruneArgs({ olderThanMs: -1 }, 'Outbox.prune')         // throws InvalidInputError, field 'olderThanMs'
 */
export function validPruneArgs(args: unknown, where: string): PruneArgs {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    refuse('olderThanMs', 'wrong_type', `${where} takes { olderThanMs }, got ${describeValue(args)}`);
  }
  checkOptionNames(args, PRUNE_ARG_NAMES, where);
  const olderThanMs = (args as { olderThanMs?: unknown }).olderThanMs;
  if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
    refuse(
      'olderThanMs',
      typeof olderThanMs === 'number' ? 'out_of_range' : 'wrong_type',
      `olderThanMs must be a number of milliseconds >= 0, got ${describeValue(olderThanMs)}`,
    );
  }
  return { olderThanMs };
}

/**
 * The instant a `prune` deletes before, in epoch milliseconds: `olderThanMs` before `nowMs`, and never
 * before 1970 (a retention longer than the epoch's age deletes nothing stored since then).
 *
 * @example
 * pruneCutoffMs(86_400_000, Date.parse('2026-12-08T00:00:00Z')) // Date.parse('2026-12-07T00:00:00Z')
 */
export function pruneCutoffMs(olderThanMs: number, nowMs: number = Date.now()): number {
  return Math.max(0, nowMs - olderThanMs);
}
