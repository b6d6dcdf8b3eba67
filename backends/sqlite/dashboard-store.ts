import type { DailyTotal, DashboardStore, KeyActivity, KeyPage, KeyPageQuery } from 'keygate/store-kit';
import { ISO_TIME, type KeyRow, keyRecordOf } from '../sql/key-record.js';
import { DASHBOARD_SQL } from '../sql/sqlite/dashboard.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { guarded, storeError } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * Options of {@link SqliteDashboardStore}.
 *
 * @example
 * const options: SqliteDashboardStoreOptions = { database: new Database('keygate.db') };
 */
export interface SqliteDashboardStoreOptions {
  /** The database of the `SqliteKeyStore` whose keys the dashboard shows. The caller owns it. */
  database: SqliteDatabase;
  /** How long a write (a used token) waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

/**
 * The dashboard's store in a SQLite file, beside a `SqliteKeyStore`: it reads that store's tables
 * (keys, usage, last use) with one statement per call, on their indexes, and keeps the single-use
 * tokens in `keygate_used_tokens`, so a sign-in link works once across every process on the file.
 * A failure of SQLite throws `KeyStoreUnavailableError` with SQLite's error as `cause`.
 *
 * @example
 * const store = new SqliteDashboardStore({ database });
 * await store.migrate();
 * const ui = dashboard({ manager: new KeyManager({ store: new SqliteKeyStore({ database }) }), store, secret });
 */
export class SqliteDashboardStore implements DashboardStore {
  /** Milliseconds a write waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteDashboardStoreOptions) {
    this.driver = sqliteDriver(options?.database);
    this.busyTimeoutMs = validBusyTimeoutMs(options.busyTimeoutMs, 2_000);
  }

  /**
   * Creates or upgrades the tables, the key store's included: the same versioned migrations as
   * `SqliteKeyStore.migrate`, so calling both, in any order, is safe. Idempotent.
   *
   * @example
   * await store.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.driver, this.busyTimeoutMs);
  }

  listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage> {
    return guarded(() => this.page(accountId, query));
  }

  getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return guarded(() =>
      this.driver
        .all<{ key_id: string; day: string; total: number }>(DASHBOARD_SQL.dailyTotals, [
          JSON.stringify(keyIds),
          from,
          to,
        ])
        .map((r) => ({ keyId: r.key_id, day: r.day, total: Number(r.total) })),
    );
  }

  getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return guarded(() =>
      this.driver
        .all<{ key_id: string; last_used_at: string; last_used_ip: string | null }>(DASHBOARD_SQL.activity, [
          JSON.stringify(keyIds),
        ])
        .map((r) => ({ keyId: r.key_id, lastUsedAt: ISO_TIME.read(r.last_used_at), lastUsedIp: r.last_used_ip })),
    );
  }

  /** Records `tokenId` until `expiresAt`; true when this call recorded it (the write lock makes one call win). */
  async markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    const now = new Date().toISOString();
    try {
      return this.driver.transaction(() => {
        // Now and then, drop records whose token no longer verifies anyway.
        if (Math.random() < 1 / 64) this.driver.run(DASHBOARD_SQL.pruneTokens, [now]);
        return this.driver.get(DASHBOARD_SQL.markToken, [tokenId, ISO_TIME.write(expiresAt), now]) !== undefined;
      }, this.busyTimeoutMs);
    } catch (err) {
      throw storeError(err);
    }
  }

  isTokenUsed(tokenId: string): Promise<boolean> {
    return guarded(() => this.driver.get(DASHBOARD_SQL.tokenUsed, [tokenId, new Date().toISOString()]) !== undefined);
  }

  private page(accountId: string, page: KeyPageQuery): KeyPage {
    const needle = page.search ? page.search.toLowerCase() : null;
    const status = page.status ?? null;
    const mode = page.mode ?? null;
    const rows = this.driver.all<KeyRow & { total: number }>(DASHBOARD_SQL.keysPage, [
      accountId,
      needle,
      needle,
      needle,
      needle,
      status,
      status,
      mode,
      mode,
      page.limit,
      page.offset,
    ]);
    if (rows.length === 0 && page.offset > 0) {
      // Past the end: the window count needs a row; ask for the first page to learn the total.
      return { records: [], total: this.page(accountId, { ...page, offset: 0, limit: 1 }).total };
    }
    return { records: rows.map((row) => keyRecordOf(row, ISO_TIME)), total: Number(rows[0]?.total ?? 0) };
  }
}
