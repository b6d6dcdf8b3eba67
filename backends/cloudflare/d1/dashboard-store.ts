import { SqlDashboardStore } from '../../sql/dashboard-store.js';
import { SQLITE_DASHBOARD } from '../../sql/sqlite/dashboard.js';
import type { D1Like } from './bindings.js';
import { d1Engine } from './d1-tx.js';
import { validD1 } from './errors.js';
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

// Every member of {@link D1DashboardStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ db: true } satisfies Record<keyof D1DashboardStoreOptions, true>);

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
export class D1DashboardStore extends SqlDashboardStore {
  constructor(options: D1DashboardStoreOptions) {
    const db = validD1(options?.db);
    super(
      { ...d1Engine(db), ...SQLITE_DASHBOARD, migrate: () => migrateD1(db) },
      { where: 'D1DashboardStore', options, names: OPTION_NAMES },
    );
  }
}
