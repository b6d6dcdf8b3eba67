// The key store's statements (tables in ./migrations.ts). `?` placeholders only, in the order each
// comment gives.
import { KEY_COLUMNS, keyUpdateSql, marks } from '../key-record.js';
import type { KeyDialect } from '../key-store.js';
import { sqliteDuplicateKey } from './unique.js';

/** The key store's statements. */
export const KEY_SQL = {
  /** ? digest. */
  byHash: `SELECT ${KEY_COLUMNS} FROM keygate_keys WHERE hash = ?`,
  /** ? id. */
  byId: `SELECT ${KEY_COLUMNS} FROM keygate_keys WHERE id = ?`,
  /** ? account. */
  byAccount: `SELECT ${KEY_COLUMNS} FROM keygate_keys WHERE account_id = ? ORDER BY created_at, id`,
  /** The 20 columns, in `KEY_COLUMNS` order. */
  insert: `INSERT INTO keygate_keys (${KEY_COLUMNS}) VALUES (${marks(20)})`,
  /**
   * ? name, status, permissions, allowed_ips, updated_at, expires_at, revoked_at, rotated_to, metadata,
   * version, rate_limit, suspended_at, suspended_reason, then ? id.
   */
  update: keyUpdateSql('keygate_keys'),
} as const;

/** Usage statistics: counts added by upsert, so that flushes from several processes add up exactly. */
export const USAGE_SQL = {
  /** ? key, account, day (YYYY-MM-DD), outcome, count. */
  addCount: `INSERT INTO keygate_usage (key_id, account_id, day, outcome, count) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (key_id, day, outcome) DO UPDATE SET count = count + excluded.count`,
  /** ? key, last used at (ISO), last used ip. An older activity never replaces a newer one. */
  setActivity: `INSERT INTO keygate_key_activity (key_id, last_used_at, last_used_ip) VALUES (?, ?, ?)
      ON CONFLICT (key_id) DO UPDATE SET last_used_at = excluded.last_used_at, last_used_ip = excluded.last_used_ip
      WHERE last_used_at < excluded.last_used_at`,
  /** ? key, from day, to day. */
  counts: `SELECT account_id, day, outcome, count FROM keygate_usage
      WHERE key_id = ? AND day BETWEEN ? AND ? ORDER BY day, outcome`,
  /** ? key. */
  activity: 'SELECT last_used_at, last_used_ip FROM keygate_key_activity WHERE key_id = ?',
} as const;

/** The change feed: a row per key write, polled by every instance. */
export const CHANGE_SQL = {
  /** ? at (epoch ms), change (JSON). */
  append: 'INSERT INTO keygate_changes (at, change) VALUES (?, ?)',
  /** The newest sequence number (0 when the table is empty). */
  latest: 'SELECT coalesce(max(seq), 0) AS seq FROM keygate_changes',
  /** ? after seq, limit. */
  after: 'SELECT seq, change FROM keygate_changes WHERE seq > ? ORDER BY seq LIMIT ?',
  /** ? before (epoch ms). Deletes older rows, keeping the newest so that a poller can tell a gap. */
  prune: 'DELETE FROM keygate_changes WHERE at < ? AND seq < (SELECT max(seq) FROM keygate_changes)',
} as const;

/**
 * The key store's reads and duplicate-key reading in the SQLite family (SQLite files and D1): no row
 * lock (a write holds the file), `RETURNING` on insert.
 *
 * @example
 * super({ ...engine, ...SQLITE_KEYS, engine: 'sqlite', ... }, options);
 */
export const SQLITE_KEYS = {
  lockRow: '',
  returning: true,
  usageSql: { counts: USAGE_SQL.counts, activity: USAGE_SQL.activity },
  duplicate: sqliteDuplicateKey,
} satisfies Partial<KeyDialect<never>>;
