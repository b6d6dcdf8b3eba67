import { type DashboardDialect, upsertToken } from '../dashboard-store.js';
import { ISO_TIME } from '../key-record.js';

/**
 * The dashboard store's tables and expressions in the SQLite family (SQLite files and D1): `instr`
 * finds the needle as plain characters (SQLite's `lower` folds ASCII letters only); days are text.
 *
 * @example
 * super({ runner: sqliteRunner(driver, 2_000), ...SQLITE_DASHBOARD });
 */
export const SQLITE_DASHBOARD: Omit<DashboardDialect, 'runner'> = {
  time: ISO_TIME,
  keys: 'keygate_keys',
  usage: 'keygate_usage',
  activity: 'keygate_key_activity',
  tokens: 'keygate_used_tokens',
  text: '?',
  contains: (column) => `instr(${column}, ?) > 0`,
  dayText: 'day',
  markToken: (tx, tokenId, until, now) => upsertToken(tx, 'keygate_used_tokens', tokenId, until, now),
};
