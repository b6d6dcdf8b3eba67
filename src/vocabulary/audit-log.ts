import type { PruneArgs, PruneResult } from './retention.js';

// The audit log of key management (docs/guide/key-management.md, "Audit log"): what happened to which
// key, when, and who did it. A backend that holds one declares it as its `audit` capability.

/**
 * What an audit entry records. `key.*` are the `KeyManager`'s writes, but for `key.leaked`: a report
 * that the key was found in public (GitHub secret scanning, `keygate/leaks`); `credits.topped_up` a top-up of
 * an account's credits; `dashboard.signed_in` a sign-in to the developer dashboard.
 *
 * @example
 * const action: AuditAction = 'key.revoked';
 */
export type AuditAction =
  | 'key.created'
  | 'key.updated'
  | 'key.rotated'
  | 'key.suspended'
  | 'key.resumed'
  | 'key.revoked'
  | 'key.imported'
  | 'key.leaked'
  | 'credits.topped_up'
  | 'dashboard.signed_in';

/**
 * Who did it: through the dashboard (`id` the signed-in account), the CLI (`id` the operating-system
 * user) or the API (an application's own call to `KeyManager`; `id` whatever the host names it by).
 *
 * @example
 * const actor: AuditActor = { type: 'cli', id: 'alice' };
 */
export interface AuditActor {
  readonly type: 'dashboard' | 'cli' | 'api';
  /** 1-200 characters. */
  readonly id?: string;
}

/**
 * What changed, field by field: the value before and after. `key.created` and `key.imported` carry
 * the new key's `name`, `mode` and `permissions` (before `null`); `key.rotated` `rotatedTo`;
 * `key.revoked`, `key.suspended` and `key.resumed` `status`. Never a secret, digest or hash.
 *
 * @example
 * const changes: AuditChanges = { allowedIps: { before: ['203.0.113.0/24'], after: [] } };
 */
export type AuditChanges = Readonly<Record<string, { readonly before: unknown; readonly after: unknown }>>;

/**
 * One line of the audit log. `id` orders the entries by when they were appended (see `auditId`);
 * `at` is when it happened, by the writer's clock, an ISO 8601 string.
 *
 * @example
 * { id: 'aud_0m3x9k2a1000018f3k2d9qz1', at: '2026-11-24T18:00:00.000Z', accountId: 'acct_1',
 *   keyId: 'key_…', action: 'key.updated', actor: { type: 'cli', id: 'alice' },
 *   changes: { name: { before: 'ci', after: 'ci-2' } } }
 */
export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly accountId: string;
  readonly keyId?: string;
  readonly action: AuditAction;
  readonly actor: AuditActor;
  readonly changes?: AuditChanges;
  /** The client address of the request that did it, when known. */
  readonly address?: string;
}

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
 * continuing a listing with no entry repeated or skipped. Returned entries are frozen copies: changing one changes nothing stored.
 * Held by `MemoryKeyStore`, `PostgresKeyStore` (PostgreSQL and PGlite) and `RedisKeyStore` as their
 * `audit` capability; proven by `describeAuditLogContract` from `keygate/testing`.
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
