// Retention (docs/guide/retention.md): what the outbox, the audit log and usage keep, and how each
// deletes what is older than its retention. Every capability that grows with traffic or time has a
// `prune` that takes these arguments and answers with this result.

/**
 * What `prune` deletes: what ended (an outbox event delivered or given up, a UTC day of usage) or
 * happened (an audit entry) more than `olderThanMs` milliseconds before the call. A non-negative
 * finite number; anything else is an `InvalidInputError` naming `olderThanMs`, and a member other
 * than `olderThanMs` is refused (`unknown_option`).
 *
 * @example
 * await outbox.prune({ olderThanMs: 7 * 86_400_000 }); // what ended more than 7 days ago
 */
export interface PruneArgs {
  /** How old, in milliseconds before now, a row must be to go. `0`: everything already ended. */
  olderThanMs: number;
}

/**
 * What `prune` did: how many rows (or records) it deleted. Counted as the backend stores them: an
 * outbox counts each event and each of its deliveries, usage each count of a key, day and outcome,
 * the audit log each entry. A second `prune` with the same arguments deletes 0.
 *
 * @example
 * const { deleted } = await log.prune({ olderThanMs: 400 * 86_400_000 });
 */
export interface PruneResult {
  readonly deleted: number;
}
