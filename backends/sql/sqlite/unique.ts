/**
 * The column of a UNIQUE or PRIMARY KEY constraint that `err` broke (`keygate_keys.hash`), or
 * undefined for any other error. SQLite's own message names it, whichever driver carried it
 * (better-sqlite3, node:sqlite, D1).
 *
 * @example
 * uniqueViolation(new Error('UNIQUE constraint failed: keygate_keys.hash')) // 'keygate_keys.hash'
 */
export function uniqueViolation(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : '';
  return /UNIQUE constraint failed: ([\w.]+)/.exec(message)?.[1];
}
