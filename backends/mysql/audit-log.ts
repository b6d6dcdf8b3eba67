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
import { isoTime, json, type SqlClient, sqlTime } from './sql-client.js';

interface AuditRow {
  id: string;
  at: string;
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
 * The audit log of a `MysqlKeyStore` (its `audit` capability), in the table `<prefix>audit`.
 * Append-only in the database itself: triggers refuse every UPDATE and DELETE of the table, whoever
 * sends it (TRUNCATE fires no trigger in MySQL or MariaDB: grant the application's user no DROP). Each
 * append is one INSERT; listings page on the indexes `(account_id, id)` and `(key_id, id)`, ids
 * compared byte by byte (`utf8mb4_bin`). Every process on the database reads the same entries.
 */
export class MysqlAuditLog implements AuditLog {
  private readonly table: string;

  /** `prefix` validated by the store. */
  constructor(
    private readonly sql: SqlClient,
    prefix: string,
  ) {
    this.table = `${prefix}audit`;
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    await this.sql.query(`INSERT INTO ${this.table} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      entry.id,
      sqlTime(entry.at),
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
    const params: unknown[] = [accountId];
    let where = 'account_id = ?';
    if (keyId !== undefined) {
      params.push(keyId);
      where += ' AND key_id = ?';
    }
    if (before !== undefined) {
      params.push(before);
      where += ' AND id < ?';
    }
    // `limit` is a validated integer, written in as a number.
    const { rows } = await this.sql.query<AuditRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE ${where} ORDER BY id DESC LIMIT ${Number(limit)}`,
      params,
    );
    return rows.map(entryOf);
  }
}

function entryOf(row: AuditRow): AuditEntry {
  const changes = json<AuditEntry['changes'] | null>(row.changes);
  return freezeAuditEntry(row.id, {
    at: isoTime(row.at),
    accountId: row.account_id,
    ...(row.key_id !== null && { keyId: row.key_id }),
    action: row.action,
    actor: row.actor_id === null ? { type: row.actor_type } : { type: row.actor_type, id: row.actor_id },
    ...(changes !== null && changes !== undefined && { changes }),
    ...(row.address !== null && { address: row.address }),
  });
}
