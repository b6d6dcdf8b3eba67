import { SqlAuditLog } from '../sql/audit-log.js';
import { ISO_TIME } from '../sql/key-record.js';
import type { SqlClient } from './sql-client.js';
import { pgRunner } from './sql-tx.js';

/**
 * The audit log of a `PostgresKeyStore` (its `audit` capability), in the table `keygate_audit` of
 * the store's schema (migration 5). Append-only in the database itself: a trigger refuses every
 * UPDATE, DELETE and TRUNCATE of the table, whoever sends it. Each append is one INSERT; listings
 * page on the indexes `(account_id, id)` and `(key_id, id)`. Every process on the database reads
 * the same entries.
 */
export class PostgresAuditLog extends SqlAuditLog {
  /** `schema` validated and quoted by the store. */
  constructor(sql: SqlClient, quotedSchema: string) {
    super({ table: `${quotedSchema}.keygate_audit`, time: ISO_TIME, runner: pgRunner(sql) });
  }
}
