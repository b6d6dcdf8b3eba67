import {
  type AuditEntry,
  type AuditEntryInput,
  type AuditLog,
  type AuditQuery,
  auditId,
  freezeAuditEntry,
  validAuditEntry,
  validAuditQuery,
} from 'keygate/store-kit';
import type { SqlClient } from './sql-client.js';

interface AuditRow {
  id: string;
  at: Date | string;
  account_id: string;
  key_id: string | null;
  action: AuditEntry['action'];
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  changes: unknown;
  address: string | null;
}

const COLUMNS = 'id, at, account_id, key_id, action, actor_type, actor_id, changes, address';

/**
 * The audit log of a `PostgresKeyStore` (its `audit` capability), in the table `keygate_audit` of
 * the store's schema (migration 5). Append-only in the database itself: a trigger refuses every
 * UPDATE, DELETE and TRUNCATE of the table, whoever sends it. Each append is one INSERT; listings
 * page on the indexes `(account_id, id)` and `(key_id, id)`. Every process on the database reads
 * the same entries.
 */
export class PostgresAuditLog implements AuditLog {
  private readonly table: string;

  /** `schema` validated and quoted by the store. */
  constructor(
    private readonly sql: SqlClient,
    quotedSchema: string,
  ) {
    this.table = `${quotedSchema}.keygate_audit`;
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    await this.sql.query(`INSERT INTO ${this.table} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`, [
      entry.id,
      entry.at,
      entry.accountId,
      entry.keyId ?? null,
      entry.action,
      entry.actor.type,
      entry.actor.id ?? null,
      entry.changes === undefined ? null : JSON.stringify(entry.changes),
      entry.address ?? null,
    ]);
    return entry;
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    const params: unknown[] = [accountId, limit];
    let where = 'account_id = $1';
    if (keyId !== undefined) {
      params.push(keyId);
      where += ` AND key_id = $${params.length}`;
    }
    if (before !== undefined) {
      params.push(before);
      where += ` AND id < $${params.length}`;
    }
    const { rows } = await this.sql.query<AuditRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE ${where} ORDER BY id DESC LIMIT $2`,
      params,
    );
    return rows.map(entryOf);
  }
}

function entryOf(row: AuditRow): AuditEntry {
  const changes = typeof row.changes === 'string' ? JSON.parse(row.changes) : row.changes;
  return freezeAuditEntry(row.id, {
    at: new Date(row.at).toISOString(),
    accountId: row.account_id,
    ...(row.key_id !== null && { keyId: row.key_id }),
    action: row.action,
    actor: row.actor_id === null ? { type: row.actor_type } : { type: row.actor_type, id: row.actor_id },
    ...(changes !== null && changes !== undefined && { changes }),
    ...(row.address !== null && { address: row.address }),
  });
}
