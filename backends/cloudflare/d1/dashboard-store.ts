import type { DailyTotal, DashboardStore, KeyActivity, KeyPage, KeyPageQuery } from 'keygate/store-kit';
import { ISO_TIME, type KeyRow, keyRecordOf } from '../../sql/key-record.js';
import { DASHBOARD_SQL } from '../../sql/sqlite/dashboard.js';
import type { D1Like } from './bindings.js';
import { d1Guarded, validD1 } from './errors.js';
import { migrateD1 } from './migrate.js';

/**
 * Options of {@link D1DashboardStore}.
 *
 * @example
 * const options: D1DashboardStoreOptions = { db: env.DB };
 */
export interface D1DashboardStoreOptions {
  /** The D1 database binding of the `D1KeyStore` whose keys the dashboard shows. */
  db: D1Like;
}

/**
 * The dashboard's store in D1, beside a `D1KeyStore`: it reads that store's tables (keys, usage, last
 * use) with one statement per call, on their indexes, and keeps the single-use tokens in
 * `keygate_used_tokens`: marking one is a single `INSERT ... ON CONFLICT ... RETURNING`, so a sign-in
 * link works once across every isolate. A failure of D1 throws `KeyStoreUnavailableError`.
 *
 * @example
 * const store = new D1DashboardStore({ db: env.DB });
 * const ui = dashboard({ manager: new KeyManager({ store: new D1KeyStore({ db: env.DB }) }), store, secret });
 */
export class D1DashboardStore implements DashboardStore {
  private readonly db: D1Like;

  constructor(options: D1DashboardStoreOptions) {
    this.db = validD1(options?.db);
  }

  /**
   * Creates or upgrades the tables, the key store's included (one migration history). Idempotent.
   *
   * @example
   * await store.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateD1(this.db);
  }

  listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage> {
    return d1Guarded(() => this.page(accountId, query));
  }

  getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return d1Guarded(async () => {
      const { results } = await this.db
        .prepare(DASHBOARD_SQL.dailyTotals)
        .bind(JSON.stringify(keyIds), from, to)
        .all<{ key_id: string; day: string; total: number }>();
      return results.map((r) => ({ keyId: r.key_id, day: r.day, total: Number(r.total) }));
    });
  }

  getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return d1Guarded(async () => {
      const { results } = await this.db
        .prepare(DASHBOARD_SQL.activity)
        .bind(JSON.stringify(keyIds))
        .all<{ key_id: string; last_used_at: string; last_used_ip: string | null }>();
      return results.map((r) => ({
        keyId: r.key_id,
        lastUsedAt: ISO_TIME.read(r.last_used_at),
        lastUsedIp: r.last_used_ip,
      }));
    });
  }

  /** Records `tokenId` until `expiresAt`; true when this call recorded it (one statement: one call wins). */
  markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    const now = new Date().toISOString();
    return d1Guarded(async () => {
      // Now and then, drop records whose token no longer verifies anyway.
      if (Math.random() < 1 / 64) await this.db.prepare(DASHBOARD_SQL.pruneTokens).bind(now).run();
      const row = await this.db.prepare(DASHBOARD_SQL.markToken).bind(tokenId, ISO_TIME.write(expiresAt), now).first();
      return row !== null;
    });
  }

  isTokenUsed(tokenId: string): Promise<boolean> {
    return d1Guarded(
      async () =>
        (await this.db.prepare(DASHBOARD_SQL.tokenUsed).bind(tokenId, new Date().toISOString()).first()) !== null,
    );
  }

  private async page(accountId: string, page: KeyPageQuery): Promise<KeyPage> {
    const needle = page.search ? page.search.toLowerCase() : null;
    const status = page.status ?? null;
    const mode = page.mode ?? null;
    const { results: rows } = await this.db
      .prepare(DASHBOARD_SQL.keysPage)
      .bind(accountId, needle, needle, needle, needle, status, status, mode, mode, page.limit, page.offset)
      .all<KeyRow & { total: number }>();
    if (rows.length === 0 && page.offset > 0) {
      // Past the end: the window count needs a row; ask for the first page to learn the total.
      return { records: [], total: (await this.page(accountId, { ...page, offset: 0, limit: 1 })).total };
    }
    return { records: rows.map((row) => keyRecordOf(row, ISO_TIME)), total: Number(rows[0]?.total ?? 0) };
  }
}
