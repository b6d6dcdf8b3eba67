import { type DashboardDialect, upsertToken } from '../dashboard-store.js';
import type { SqlEngine } from '../engine.js';

/**
 * The dashboard store's expressions in the SQLite family (SQLite files and D1): `instr`
 * finds the needle as plain characters (SQLite's `lower` folds ASCII letters only); days are text.
 *
 * @example
 * super({ ...engine, ...SQLITE_DASHBOARD });
 */
export const SQLITE_DASHBOARD: Omit<DashboardDialect, keyof SqlEngine | 'migrate'> = {
  text: '?',
  contains: (column) => `instr(${column}, ?) > 0`,
  dayText: 'day',
  markToken: (tx, tokenId, until, now) => upsertToken(tx, 'keygate_used_tokens', tokenId, until, now),
};
