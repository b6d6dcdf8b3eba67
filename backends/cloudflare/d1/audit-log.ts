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
import { AUDIT_SQL } from '../../sql/sqlite/audit.js';
import type { D1Like } from './bindings.js';
import { d1Guarded, validD1 } from './errors.js';
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
 * The audit log in D1 (`keygate_audit`, the table of `keygate/sqlite`), the `audit` capability of a
 * `D1KeyStore` on the same database, so a `KeyManager` writes to it with no extra option. Append-only
 * in the database itself: triggers refuse every UPDATE and DELETE of the table, whoever sends it.
 * Each append is one `INSERT`; listings page on the indexes `(account_id, id)` and `(key_id, id)`.
 *
 * @example
 * const log = new D1AuditLog({ db: env.DB });
 * await log.list({ accountId: 'acct_1', limit: 20 });
 */
export class D1AuditLog implements AuditLog {
  private readonly db: D1Like;

  constructor(options: D1AuditLogOptions) {
    this.db = validD1(options?.db);
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

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    await d1Guarded(() =>
      this.db
        .prepare(AUDIT_SQL.append)
        .bind(
          entry.id,
          entry.at,
          entry.accountId,
          entry.keyId ?? null,
          entry.action,
          entry.actor.type,
          entry.actor.id ?? null,
          entry.changes === undefined ? null : JSON.stringify(entry.changes),
          entry.address ?? null,
        )
        .run(),
    );
    return entry;
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    const params: (string | number)[] = [accountId];
    if (keyId !== undefined) params.push(keyId);
    if (before !== undefined) params.push(before);
    params.push(limit);
    const sql = AUDIT_SQL.list(keyId !== undefined, before !== undefined);
    return d1Guarded(async () => {
      const { results } = await this.db
        .prepare(sql)
        .bind(...params)
        .all<AuditRow>();
      return results.map(entryOf);
    });
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
