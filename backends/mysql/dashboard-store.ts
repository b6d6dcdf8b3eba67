import type { Pool } from 'mysql2/promise';
import { SqlDashboardStore } from '../sql/dashboard-store.js';
import type { RunInfo } from '../sql/step.js';
import { migrateKeyStore } from './migrate.js';
import { sqlClient, validTablePrefix } from './sql-client.js';
import { type MysqlTx, mysqlEngine } from './sql-tx.js';

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

// Every member of {@link MysqlDashboardStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, tablePrefix: true } satisfies Record<
  keyof MysqlDashboardStoreOptions,
  true
>);

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
export class MysqlDashboardStore extends SqlDashboardStore<MysqlTx> {
  readonly tablePrefix: string;

  constructor(options: MysqlDashboardStoreOptions) {
    const sql = sqlClient(options?.client);
    const p = validTablePrefix(options.tablePrefix ?? 'keygate_');
    super(
      {
        ...mysqlEngine(sql, p),
        migrate: () => migrateKeyStore(sql, p),
        text: '?',
        contains: (column) => `LOCATE(?, ${column}) > 0`,
        dayText: `DATE_FORMAT(day, '%Y-%m-%d')`,
        // MySQL's upsert cannot say whether it took an expired record: insert, else take it back if expired.
        *markToken(tx, tokenId, until, now) {
          const sql = `INSERT IGNORE INTO ${p}used_tokens (token_id, expires_at) VALUES (?, ?)`;
          if (((yield tx.run(sql, [tokenId, until])) as RunInfo).changes === 1) return true;
          const take = `UPDATE ${p}used_tokens SET expires_at = ? WHERE token_id = ? AND expires_at <= ?`;
          return ((yield tx.run(take, [until, tokenId, now])) as RunInfo).changes === 1;
        },
      },
      { where: 'MysqlDashboardStore', options, names: OPTION_NAMES },
    );
    this.tablePrefix = p;
  }
}
