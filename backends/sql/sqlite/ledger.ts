// The migration ledger of the SQLite family (SQLite files and D1): one table, `keygate_migrations`.

/** Creates the ledger when it is missing. */
export const SQLITE_LEDGER =
  'CREATE TABLE IF NOT EXISTS keygate_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)';

/** ? version, applied at (ISO). */
export const SQLITE_RECORD = 'INSERT INTO keygate_migrations (version, applied_at) VALUES (?, ?)';

const PRESENT = `SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'keygate_migrations'`;
const LATEST = 'SELECT max(version) AS v FROM keygate_migrations';

/**
 * The newest version recorded, 0 when the ledger is missing, through `first` (the first row of a
 * statement, at once or as a promise).
 *
 * @example
 * const version = await sqliteRecorded((sql) => db.prepare(sql).first());
 */
export function sqliteRecorded(first: (sql: string) => unknown): number | Promise<number> {
  const latest = (row: unknown) => Number((row as { v?: number | null } | undefined)?.v ?? 0);
  const present = first(PRESENT);
  if (present instanceof Promise) {
    return present.then(async (p) => (p ? latest(await first(LATEST)) : 0));
  }
  return present ? latest(first(LATEST)) : 0;
}
