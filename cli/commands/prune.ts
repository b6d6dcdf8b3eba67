// What the `prune` commands share (docs/guide/retention.md): the retention they are given, and how
// they say what they deleted. Run from a scheduler (cron, a systemd timer, a Kubernetes CronJob).
import type { PruneResult } from 'keygate';
import type { CommandOutput } from '../command.js';
import { formatDuration } from '../duration.js';

/**
 * The `--older-than` flag of every `prune` command, required: a retention is always the operator's to state.
 *
 * @example
 * flags: { 'older-than': olderThan('400d') }
 */
export function olderThan(example: string) {
  return {
    kind: 'duration',
    value: 'DURATION',
    example,
    required: true,
    help: 'delete what is older than this',
  } as const;
}

/**
 * What a prune command prints: the count deleted and the retention it applied.
 *
 * @example
 * prunedOutput({ deleted: 3 }, 34_560_000_000, 'audit entries') // text 'deleted 3 audit entries older than 400d'
 */
export function prunedOutput(result: PruneResult, olderThanMs: number, what: string): CommandOutput {
  return {
    json: { deleted: result.deleted, olderThanMs },
    text: `deleted ${result.deleted} ${what} older than ${formatDuration(olderThanMs)}`,
  };
}
