// The rate limiter's statements (table `keygate_rate_limits` in ../migrations.ts).

/** The rate limiter's statements. Times are epoch milliseconds. */
export const RATE_LIMIT_SQL = {
  /**
   * One statement per request, read and written under the write lock: ? key, window end of a new
   * window (now + window), units used by a new window (the cost when it fits, else 0), allowed in a
   * new window (0/1), now, now, cost, limit, cost, now, cost, limit. SET expressions read the row as
   * it was before this statement; RETURNING gives it after.
   */
  consume: `INSERT INTO keygate_rate_limits AS r (key_id, window_end, used, allowed) VALUES (?, ?, ?, ?)
      ON CONFLICT (key_id) DO UPDATE SET
        window_end = CASE WHEN r.window_end <= ? THEN excluded.window_end ELSE r.window_end END,
        used = CASE WHEN r.window_end <= ? THEN excluded.used WHEN r.used + ? <= ? THEN r.used + ? ELSE r.used END,
        allowed = CASE WHEN r.window_end <= ? THEN excluded.allowed ELSE r.used + ? <= ? END
      RETURNING used, allowed, window_end`,
  /** ? now. Deletes the rows of windows that have ended. */
  prune: 'DELETE FROM keygate_rate_limits WHERE window_end <= ?',
} as const;

/**
 * The parameters of `RATE_LIMIT_SQL.consume`.
 *
 * @example
 * driver.get(RATE_LIMIT_SQL.consume, consumeParams('key_1', 10, 60_000, 1, Date.now()));
 */
export function consumeParams(
  keyId: string,
  limit: number,
  windowMs: number,
  cost: number,
  now: number,
): (string | number)[] {
  const fits = cost <= limit;
  return [keyId, now + windowMs, fits ? cost : 0, fits ? 1 : 0, now, now, cost, limit, cost, now, cost, limit];
}
