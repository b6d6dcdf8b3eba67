/**
 * How the credits a leased slice's requests spent ended up, once its settle has an answer (or can no
 * longer get one that means anything):
 * - `charged`: the shared ledger charged them;
 * - `uncharged`: it did not: the slice's hold lapsed before any settle reached it;
 * - `unresolved`: a settle attempt whose outcome never came back may have charged them, and no
 *   answer came while the hold was certainly still open to tell.
 *
 * @example
 * const outcome: SliceOutcome = 'charged';
 */
export type SliceOutcome = 'charged' | 'uncharged' | 'unresolved';

/** What {@link sliceOutcome} reads about a slice and the answer to its settle. */
export interface SliceSettleFacts {
  /** Credits the settle asked to charge (what the slice's requests spent). */
  spent: number;
  /** Credits the answer says it charged. */
  charged: number;
  /**
   * Whether an earlier settle attempt, sent while the hold could still be open, failed or timed out:
   * it may have been applied, and a hold settled by it answers `charged: 0` to the next attempt.
   */
  doubt: boolean;
  /** When this answer came, epoch milliseconds on the process clock. */
  answeredAt: number;
  /** Before this (process clock, epoch milliseconds) the slice's hold cannot have lapsed. */
  lapsesFrom: number;
}

/**
 * Reads a slice settle's answer. A slice's hold is closed only by its own settle or by its lapse, so
 * an answer that charged less than was spent means: the hold lapsed, when no earlier attempt may have
 * been applied (`uncharged`); an earlier attempt was applied, when this one was answered before the
 * hold could lapse (`charged`); and otherwise nobody can tell (`unresolved`). Never guesses `uncharged`
 * for credits that may have been charged.
 *
 * @example
 * sliceOutcome({ spent: 10, charged: 0, doubt: true, answeredAt: 1_500, lapsesFrom: 3_600 }); // 'charged'
 */
export function sliceOutcome(facts: SliceSettleFacts): SliceOutcome {
  if (facts.charged >= facts.spent) return 'charged';
  if (!facts.doubt) return 'uncharged';
  return facts.answeredAt < facts.lapsesFrom ? 'charged' : 'unresolved';
}
