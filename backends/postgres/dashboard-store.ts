import type { DailyTotal, DashboardStore, KeyActivity, KeyPage, KeyPageQuery } from 'keygate/store-kit';
import type { Pool } from 'pg';
import * as queries from './dashboard-queries.js';
import { migrateSchema } from './migrate.js';
import { type PGliteLike, type SqlClient, sqlClient, validSchema } from './sql-client.js';

/**
 * Options of {@link PostgresDashboardStore}.
 *
 * @example
 * const options: PostgresDashboardStoreOptions = { client: pool, schema: 'keygate' };
 */
export interface PostgresDashboardStoreOptions {
  /** The `pg` Pool (not a single Client) or PGlite instance of the `PostgresKeyStore` whose keys the dashboard shows. The caller owns it and ends it. */
  client: Pool | PGliteLike;
  /** The schema of that key store's tables: lower-case letters, digits and `_`, at most 40 characters. Default `'public'`. */
  schema?: string;
}

/**
 * The dashboard's store in PostgreSQL or PGlite, beside a `PostgresKeyStore`: it reads that store's
 * tables (keys, usage, last use) with one statement per call, on their indexes, and keeps the
 * single-use tokens in `keygate_used_tokens`, so a sign-in link works once across every process
 * sharing the database. A failure of the client throws `KeyStoreUnavailableError` with the client's
 * error as `cause`.
 *
 * @example
 * const pool = new pg.Pool({ connectionString });
 * const store = new PostgresDashboardStore({ client: pool });
 * await store.migrate();
 * const ui = dashboard({ manager: new KeyManager({ store: new PostgresKeyStore({ client: pool }) }), store, secret });
 */
export class PostgresDashboardStore implements DashboardStore {
  readonly schema: string;
  private readonly sql: SqlClient;

  constructor(options: PostgresDashboardStoreOptions) {
    this.sql = sqlClient(options?.client);
    this.schema = validSchema(options.schema ?? 'public');
  }

  /**
   * Creates or upgrades the tables, the key store's included (the dashboard reads them): the same
   * versioned migrations as `PostgresKeyStore.migrate`, so calling both, in any order, is safe.
   * Idempotent; concurrent callers are serialised by an advisory lock.
   *
   * @example
   * await store.migrate(); // at start-up; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateSchema(this.sql, this.schema);
  }

  listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage> {
    return queries.keysPage(this.sql.query, this.schema, accountId, query);
  }

  getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    return queries.dailyTotalsOfKeys(this.sql.query, this.schema, keyIds, from, to);
  }

  getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    return queries.activityOfKeys(this.sql.query, this.schema, keyIds);
  }

  markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    return queries.markTokenUsed(this.sql.query, this.schema, tokenId, expiresAt);
  }

  isTokenUsed(tokenId: string): Promise<boolean> {
    return queries.isTokenUsed(this.sql.query, this.schema, tokenId);
  }
}
