import { SqlAuditLog } from '../sql/audit-log.js';
import type { SqlClient } from './sql-client.js';
import { MYSQL_TIME, mysqlRunner } from './sql-tx.js';

/**
 * The audit log of a `MysqlKeyStore` (its `audit` capability), in the table `<prefix>audit`.
 * Append-only in the database itself: triggers refuse every UPDATE and DELETE of the table, whoever
 * sends it (TRUNCATE fires no trigger in MySQL or MariaDB: grant the application's user no DROP). Each
 * append is one INSERT; listings page on the indexes `(account_id, id)` and `(key_id, id)`, ids
 * compared byte by byte (`utf8mb4_bin`). Every process on the database reads the same entries.
 */
export class MysqlAuditLog extends SqlAuditLog {
  /** `prefix` validated by the store. */
  constructor(sql: SqlClient, prefix: string) {
    super({ table: `${prefix}audit`, time: MYSQL_TIME, runner: mysqlRunner(sql) });
  }
}
