import type { DailyTotal, DashboardStore, KeyActivity, KeyPage, KeyPageQuery } from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
import { KEY_COLUMNS, type KeyRow, keyRecordOf } from '../sql/key-record.js';
import { migrateKeyStore } from './migrate.js';
import { isoTime, type SqlClient, sqlClient, sqlTime, validTablePrefix } from './sql-client.js';
import { MYSQL_TIME } from './sql-tx.js';

/**
 * Options of {@link MysqlDashboardStore}.
 *
 * @example
 * const options: MysqlDashboardStoreOptions = { client: pool, tablePrefix: 'keygate_' };
 */
export interface MysqlDashboardStoreOptions {
  /** The `mysql2/promise` Pool of the `MysqlKeyStore` whose keys the dashboard shows. The caller owns it and ends it. */
  client: Pool;
  /** The table prefix of that key store. @default 'keygate_' */
  tablePrefix?: string;
}

/**
 * The dashboard's store in MySQL 8 or MariaDB, beside a `MysqlKeyStore`: it reads that store's tables
 * (keys, usage, last use) with one statement per call, on their indexes, and keeps the single-use
 * tokens in `<prefix>used_tokens`, so a sign-in link works once across every process sharing the
 * database. A failure of the client throws `KeyStoreUnavailableError` with the client's error as `cause`.
 *
 * @example
 * const store = new MysqlDashboardStore({ client: pool });
 * await store.migrate();
 * const ui = dashboard({ manager: new KeyManager({ store: new MysqlKeyStore({ client: pool }) }), store, secret });
 */
export class MysqlDashboardStore implements DashboardStore {
  readonly tablePrefix: string;
  private readonly sql: SqlClient;

  constructor(options: MysqlDashboardStoreOptions) {
    this.sql = sqlClient(options?.client);
    this.tablePrefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
  }

  /**
   * Creates or upgrades the tables, the key store's included (the dashboard reads them): the same
   * versioned migrations as `MysqlKeyStore.migrate`, so calling both, in any order, is safe.
   *
   * @example
   * await store.migrate(); // at start-up; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.sql, this.tablePrefix);
  }

  /**
   * One page of an account's keys matching `query`, newest first, and how many match: one statement on
   * the account index with a window count. The search text is matched with `LOCATE` on lower-cased
   * name, hint and id, so `%` and `_` are plain characters.
   */
  async listKeysPage(accountId: string, page: KeyPageQuery): Promise<KeyPage> {
    const needle = page.search ? page.search.toLowerCase() : null;
    const status = page.status ?? null;
    const mode = page.mode ?? null;
    const { rows } = await this.sql.query<KeyRow & { total: string | number }>(
      `SELECT ${KEY_COLUMNS}, COUNT(*) OVER () AS total FROM ${this.tablePrefix}keys
        WHERE account_id = ?
          AND (? IS NULL OR LOCATE(?, LOWER(name)) > 0 OR LOCATE(?, LOWER(hint)) > 0 OR LOCATE(?, LOWER(id)) > 0)
          AND (? IS NULL OR status = ?) AND (? IS NULL OR mode = ?)
        ORDER BY created_at DESC, id DESC LIMIT ${Number(page.limit)} OFFSET ${Number(page.offset)}`,
      [accountId, needle, needle, needle, needle, status, status, mode, mode],
    );
    if (rows.length === 0 && page.offset > 0) {
      // Past the end: the window count needs a row; ask for the first page to learn the total.
      const first = await this.listKeysPage(accountId, { ...page, offset: 0, limit: 1 });
      return { records: [], total: first.total };
    }
    return { records: rows.map((row) => keyRecordOf(row, MYSQL_TIME)), total: Number(rows[0]?.total ?? 0) };
  }

  /** Requests per day (every outcome added up) of many keys: one statement on the usage table's primary key. */
  async getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    if (keyIds.length === 0) return [];
    const { rows } = await this.sql.query<{ key_id: string; day: string; total: string | number }>(
      `SELECT key_id, DATE_FORMAT(day, '%Y-%m-%d') AS day, SUM(count) AS total FROM ${this.tablePrefix}usage
        WHERE key_id IN (?) AND day BETWEEN ? AND ? GROUP BY key_id, day`,
      [[...keyIds], from, to],
    );
    return rows.map((r) => ({ keyId: r.key_id, day: r.day, total: Number(r.total) }));
  }

  /** The last allowed use of many keys: one statement on the activity table's primary key. */
  async getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    if (keyIds.length === 0) return [];
    const { rows } = await this.sql.query<{ key_id: string; last_used_at: string; last_used_ip: string | null }>(
      `SELECT key_id, last_used_at, last_used_ip FROM ${this.tablePrefix}key_activity WHERE key_id IN (?)`,
      [[...keyIds]],
    );
    return rows.map((r) => ({ keyId: r.key_id, lastUsedAt: isoTime(r.last_used_at), lastUsedIp: r.last_used_ip }));
  }

  /**
   * Records `tokenId` until `expiresAt`; true when this call recorded it. Of two concurrent calls the
   * primary key lets one insert; an expired record is taken again by one conditional UPDATE, which the
   * row lock gives to one caller.
   */
  async markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    const table = `${this.tablePrefix}used_tokens`;
    // Now and then, drop records whose token no longer verifies anyway.
    if (Math.random() < 1 / 64) await this.sql.query(`DELETE FROM ${table} WHERE expires_at < UTC_TIMESTAMP(3)`);
    const until = sqlTime(expiresAt);
    const inserted = await this.sql.query(`INSERT IGNORE INTO ${table} (token_id, expires_at) VALUES (?, ?)`, [
      tokenId,
      until,
    ]);
    if (inserted.affectedRows === 1) return true;
    const taken = await this.sql.query(
      `UPDATE ${table} SET expires_at = ? WHERE token_id = ? AND expires_at <= UTC_TIMESTAMP(3)`,
      [until, tokenId],
    );
    return taken.affectedRows === 1;
  }

  /** True when `tokenId` is recorded and unexpired. */
  async isTokenUsed(tokenId: string): Promise<boolean> {
    const { rows } = await this.sql.query(
      `SELECT 1 FROM ${this.tablePrefix}used_tokens WHERE token_id = ? AND expires_at > UTC_TIMESTAMP(3)`,
      [tokenId],
    );
    return rows.length > 0;
  }
}
