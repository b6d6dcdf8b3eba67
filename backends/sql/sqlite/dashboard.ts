// The dashboard store's statements, over the key store's tables (./migrations.ts).
import { KEY_COLUMNS } from '../key-record.js';

/** The dashboard store's statements. Lists of ids go as one JSON array (`json_each`). */
export const DASHBOARD_SQL = {
  /** ? token id, expires at, now. One row back when this call recorded the token (an expired record may be taken again). */
  markToken: `INSERT INTO keygate_used_tokens (token_id, expires_at) VALUES (?, ?)
      ON CONFLICT (token_id) DO UPDATE SET expires_at = excluded.expires_at WHERE expires_at <= ?
      RETURNING token_id`,
  /** ? now. */
  pruneTokens: 'DELETE FROM keygate_used_tokens WHERE expires_at < ?',
  /** ? token id, now. */
  tokenUsed: 'SELECT 1 AS used FROM keygate_used_tokens WHERE token_id = ? AND expires_at > ?',
  /** ? key ids (JSON array), from day, to day. Requests per key and day, every outcome added up. */
  dailyTotals: `SELECT key_id, day, sum(count) AS total FROM keygate_usage
      WHERE key_id IN (SELECT value FROM json_each(?)) AND day BETWEEN ? AND ?
      GROUP BY key_id, day ORDER BY key_id, day`,
  /** ? key ids (JSON array). */
  activity: `SELECT key_id, last_used_at, last_used_ip FROM keygate_key_activity
      WHERE key_id IN (SELECT value FROM json_each(?))`,
  /**
   * A page of an account's keys, newest first, with how many match: ? account, needle, needle,
   * needle, needle, status, status, mode, mode, limit, offset. The needle (lower-cased) is found with
   * `instr`, so `%` and `_` are plain characters; SQLite's `lower` folds ASCII letters only.
   */
  keysPage: `SELECT ${KEY_COLUMNS}, count(*) OVER () AS total FROM keygate_keys
      WHERE account_id = ?
        AND (? IS NULL OR instr(lower(name), ?) > 0 OR instr(lower(hint), ?) > 0 OR instr(lower(id), ?) > 0)
        AND (? IS NULL OR status = ?) AND (? IS NULL OR mode = ?)
      ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
} as const;
