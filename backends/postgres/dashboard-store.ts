import type { Pool } from 'pg';
import { SqlDashboardStore, upsertToken } from '../sql/dashboard-store.js';
import { migrateSchema } from './migrate.js';
import { type PGliteLike, sqlClient, validSchema } from './sql-client.js';
import { type PgTx, pgEngine } from './sql-tx.js';

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

// Every member of {@link PostgresDashboardStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, schema: true } satisfies Record<
  keyof PostgresDashboardStoreOptions,
  true
>);

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
export class PostgresDashboardStore extends SqlDashboardStore<PgTx> {
  readonly schema: string;

  constructor(options: PostgresDashboardStoreOptions) {
    const sql = sqlClient(options?.client);
    const schema = validSchema(options.schema ?? 'public');
    const engine = pgEngine(sql, schema);
    super(
      {
        ...engine,
        migrate: () => migrateSchema(sql, schema),
        text: '?::text',
        contains: (column) => `strpos(${column}, ?) > 0`,
        dayText: `to_char(day, 'YYYY-MM-DD')`,
        markToken: (tx, tokenId, until, now) => upsertToken(tx, engine.table('used_tokens'), tokenId, until, now),
      },
      { where: 'PostgresDashboardStore', options, names: OPTION_NAMES },
    );
    this.schema = schema;
  }
}
