import type { PruneArgs, PruneResult } from './retention.js';

// The audit log of key management (docs/guide/key-management.md, "Audit log"): what happened to which
// key, when, and who did it. A backend that holds one declares it as its `audit` capability. The entry's
// own shape is in ../types.ts, beside `WriteOptions`, which carries entries with a key write.

import type { AuditActor, AuditEntry } from '../types.js';

export type { AuditAction, AuditActor, AuditChanges, AuditEntry } from '../types.js';

/**
 * An entry as it is appended: everything but its `id`, which the log assigns.
 *
 * @example
 * await log.append({ at: new Date().toISOString(), accountId: 'acct_1', action: 'dashboard.signed_in', actor: { type: 'dashboard', id: 'acct_1' } });
 */
export type AuditEntryInput = Omit<AuditEntry, 'id'>;

/**
 * Which entries to list: an account's, or one key's of that account, newest first.
 *
 * @example
 * await log.list({ accountId: 'acct_1', keyId: key.id, limit: 20, before: page.at(-1)?.id });
 */
export interface AuditQuery {
  accountId: string;
  /** Only this key's entries. @default undefined (the whole account) */
  keyId?: string;
  /** The most entries to return: 1 to 1,000. @default 50 */
  limit?: number;
  /** An entry id: the page continues after it (with the entries older than it). @default undefined (the newest) */
  before?: string;
}

/**
 * An append-only log of key management. `append` validates the entry (an `InvalidInputError` naming
 * the field, nothing written), refuses or redacts anything secret-shaped (see `validAuditEntry` in
 * `keygate/store-kit`), assigns a time-ordered id and stores it until the operator's retention
 * (`prune`) deletes it; nothing updates an entry. `list` answers newest first (by id), `before`
 * continuing a listing with no entry repeated or skipped. Returned entries are frozen copies: changing
 * one changes nothing stored. Held by `MemoryKeyStore`, `PostgresKeyStore` (PostgreSQL and PGlite),
 * `MysqlKeyStore`, `SqliteKeyStore`, `D1KeyStore` and `RedisKeyStore` as their `audit` capability,
 * and as their `auditedWrites`: each also writes the entries a key write carries (`WriteOptions.audit`)
 * in that write. Proven by `describeAuditLogContract` from `keygate/testing` (and the write's entries
 * by `describeKeyStoreContract`).
 *
 * @example
 * const log = capabilityOf(store, 'audit');
 * const latest = await log?.list({ accountId: 'acct_1', limit: 10 });
 */
export interface AuditLog {
  /** Stores `entry` with a new id, and returns it as stored. */
  append(entry: AuditEntryInput): Promise<AuditEntry>;
  /** The entries of `query.accountId` (and `query.keyId`), newest first. */
  list(query: AuditQuery): Promise<AuditEntry[]>;
  /**
   * Deletes the entries, of every account, whose `at` is more than `olderThanMs` before now: the
   * retention the operator chose (nothing in keygate calls it by itself; `keygate audit prune
   * --older-than 400d` from a scheduler does). In batches; where the database refuses deletes of the
   * log (SQL), it first records the cutoff, and refuses any delete of a newer entry still.
   */
  prune(args: PruneArgs): Promise<PruneResult>;
}

/**
 * Who is making a management call, and from where: the last option of `KeyManager.create`, `update`,
 * `rotate`, `revoke` and `import`, written to the audit log with the action.
 *
 * @example
 * await keys.revoke(key.id, { actor: { type: 'dashboard', id: accountId }, address: '203.0.113.7' });
 */
export interface AuditContext {
  /** @default { type: 'api' } */
  actor?: AuditActor;
  /** The client address of the request that asked for it. @default undefined */
  address?: string;
}
