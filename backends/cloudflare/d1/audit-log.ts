import { SqlAuditLog } from '../../sql/audit-log.js';
import type { D1Like } from './bindings.js';
import { d1Engine } from './d1-tx.js';
import { validD1 } from './errors.js';
import { migrateD1 } from './migrate.js';

/**
 * Options of {@link D1AuditLog}.
 *
 * @example
 * const options: D1AuditLogOptions = { db: env.DB };
 */
export interface D1AuditLogOptions {
  /** The D1 database binding (`env.DB`). */
  db: D1Like;
}

// Every member of {@link D1AuditLogOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ db: true } satisfies Record<keyof D1AuditLogOptions, true>);

/**
 * The audit log in D1 (`keygate_audit`, the table of `keygate/sqlite`), the `audit` capability of a
 * `D1KeyStore` on the same database, so a `KeyManager` writes to it with no extra option. Append-only
 * in the database itself: triggers refuse every UPDATE and DELETE of the table, whoever sends it.
 * Each append is one `INSERT`; listings page on the indexes `(account_id, id)` and `(key_id, id)`.
 *
 * @example
 * const log = new D1AuditLog({ db: env.DB });
 * await log.list({ accountId: 'acct_1', limit: 20 });
 */
export class D1AuditLog extends SqlAuditLog {
  private readonly db: D1Like;

  constructor(options: D1AuditLogOptions) {
    const db = validD1(options?.db);
    super(d1Engine(db), { where: 'D1AuditLog', options, names: OPTION_NAMES });
    this.db = db;
  }

  /**
   * Creates or upgrades the tables: the key store's migrations (the audit table is one of them), so
   * calling this and `D1KeyStore.migrate`, in any order, is safe. Idempotent.
   *
   * @example
   * await log.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateD1(this.db);
  }
}
