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
import { AUDIT_SQL } from '../sql/sqlite/audit.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { guarded, storeError } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * Options of {@link SqliteAuditLog}.
 *
 * @example
 * const options: SqliteAuditLogOptions = { database: new Database('keygate.db') };
 */
export interface SqliteAuditLogOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /** How long an append waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

interface AuditRow {
  id: string;
  at: string;
  account_id: string;
  key_id: string | null;
  action: AuditEntry['action'];
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  changes: string | null;
  address: string | null;
}

/**
 * The audit log in a SQLite file (`keygate_audit`), the `audit` capability of a `SqliteKeyStore`
 * over the same database, so a `KeyManager` writes to it with no extra option. Append-only in the
 * file itself: triggers refuse every UPDATE and DELETE of the table, whoever sends it. Listings page
 * on the indexes `(account_id, id)` and `(key_id, id)`; every process on the file reads the same entries.
 *
 * @example
 * const log = new SqliteAuditLog({ database });
 * await log.migrate(); // the key store's tables (one migration history)
 * await log.list({ accountId: 'acct_1', limit: 20 });
 */
export class SqliteAuditLog implements AuditLog {
  /** Milliseconds an append waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteAuditLogOptions) {
    this.driver = sqliteDriver(options?.database);
    this.busyTimeoutMs = validBusyTimeoutMs(options.busyTimeoutMs, 2_000);
  }

  /**
   * Creates or upgrades the tables: the key store's migrations (the audit table is one of them), so
   * calling this and `SqliteKeyStore.migrate`, in any order, is safe. Idempotent.
   *
   * @example
   * await log.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.driver, this.busyTimeoutMs);
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    try {
      this.driver.transaction(() => {
        this.driver.run(AUDIT_SQL.append, [
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
      }, this.busyTimeoutMs);
    } catch (err) {
      throw storeError(err);
    }
    return entry;
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    const params: (string | number)[] = [accountId];
    if (keyId !== undefined) params.push(keyId);
    if (before !== undefined) params.push(before);
    params.push(limit);
    const sql = AUDIT_SQL.list(keyId !== undefined, before !== undefined);
    return guarded(() => this.driver.all<AuditRow>(sql, params).map(entryOf));
  }
}

function entryOf(row: AuditRow): AuditEntry {
  const changes = row.changes === null ? null : JSON.parse(row.changes);
  return freezeAuditEntry(row.id, {
    at: new Date(row.at).toISOString(),
    accountId: row.account_id,
    ...(row.key_id !== null && { keyId: row.key_id }),
    action: row.action,
    actor: row.actor_id === null ? { type: row.actor_type } : { type: row.actor_type, id: row.actor_id },
    ...(changes !== null && { changes }),
    ...(row.address !== null && { address: row.address }),
  });
}
