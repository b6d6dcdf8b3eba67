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
  /**
   * The first statement of a take (the leases capability), under the write lock: opens the key's
   * window if none is open, counting nothing. ? key, window end of a new window (now + window), now,
   * now. Returns the open window's `used` and `window_end`.
   */
  open: `INSERT INTO keygate_rate_limits AS r (key_id, window_end, used, allowed) VALUES (?, ?, 0, 1)
      ON CONFLICT (key_id) DO UPDATE SET
        used = CASE WHEN r.window_end <= ? THEN 0 ELSE r.used END,
        window_end = CASE WHEN r.window_end <= ? THEN excluded.window_end ELSE r.window_end END
      RETURNING used, window_end`,
  /** The second statement of a take, in the same transaction: ? units granted, key. */
  grant: 'UPDATE keygate_rate_limits SET used = used + ?, allowed = 1 WHERE key_id = ?',
  /**
   * A give-back: ? units, key, now, the lease's window end, the window (ms). Uncounts the units (never
   * below 0) only while the open window is the lease's (its end within half a window).
   */
  giveBack: `UPDATE keygate_rate_limits SET used = max(0, used - ?)
      WHERE key_id = ? AND window_end > ? AND abs(window_end - ?) * 2 < ?`,
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
