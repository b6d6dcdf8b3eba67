import { KeygateError, UnsupportedError } from '#errors';
import { auditEntryOf, validAuditQuery } from '../audit/entry.js';
import { type EventHook, emitSafely } from '../events.js';
import { redactKeys } from '../redact/keys.js';
import type { ApiKeyRecord, WritableKeyStore } from '../types.js';
import type {
  AuditAction,
  AuditChanges,
  AuditContext,
  AuditEntry,
  AuditEntryInput,
  AuditLog,
  AuditQuery,
} from '../vocabulary/audit-log.js';
import { capabilityOf } from '../vocabulary/capabilities.js';

/**
 * What the audit trail needs of an action: the key it concerns (absent for an account's own action),
 * who did it, and what changed.
 */
export interface AuditedAction {
  readonly action: AuditAction;
  readonly accountId: string;
  readonly key?: Pick<ApiKeyRecord, 'id' | 'hint'>;
  readonly context: AuditContext;
  readonly changes?: AuditChanges;
}

/**
 * The audit side of one key write, made before the write: the entries the write carries
 * (`WriteOptions.audit`), and what is left to do once the write succeeded.
 */
export interface PreparedAudit {
  /** The entries to hand with the write; absent when the store does not write them in its writes. */
  readonly entries?: readonly AuditEntry[];
  /** Appends the entry after the write, or reports why there is none; never throws. */
  finish(): Promise<void>;
}

const DONE: PreparedAudit = { finish: async () => {} };

/**
 * The `KeyManager`'s side of the audit log: one entry per action. Over a store that writes entries in
 * its writes (its `auditedWrites` capability, the same log as its `audit`: memory, the SQL stores,
 * D1, Redis) the entry is made before the key write and goes in the write's transaction, script or
 * batch: the key change and its entry are stored together or not at all, and a crash cannot come
 * between them. Over any other store that holds an audit log, the entry is appended after the key
 * write, so a crash between the two loses it. Either way, an entry that cannot be made or written
 * never turns a successful key write into a failure; it is reported instead, as an `audit.failed`
 * event through `onEvent`, or on `console.error` when there is no hook, so it never vanishes.
 *
 * @example
 * const trail = new AuditTrail(store, onEvent, () => new Date().toISOString());
 * const audit = trail.prepare({ action: 'key.revoked', accountId, key, context, changes });
 * await store.update(key.id, patch, { audit: audit.entries });
 * await audit.finish();
 */
export class AuditTrail {
  constructor(
    private readonly store: WritableKeyStore,
    private readonly onEvent: EventHook | undefined,
    private readonly nowIso: () => string,
  ) {}

  /** The store's audit log, or undefined when it holds none. */
  get log(): AuditLog | undefined {
    return capabilityOf(this.store, 'audit');
  }

  /**
   * The audit side of the key write about to record `done`: its entry, to carry in the write when the
   * store writes entries in its writes, or else an append to make once the write succeeded. An entry
   * that cannot be made (refused by `validAuditEntry`) goes with no write, and `finish` reports it.
   */
  prepare(done: AuditedAction): PreparedAudit {
    const log = this.log;
    if (!log) return DONE;
    if (capabilityOf(this.store, 'auditedWrites') !== log) return { finish: () => this.record(done).then(() => {}) };
    try {
      return { entries: [auditEntryOf(this.inputOf(done))], finish: DONE.finish };
    } catch (err) {
      return { finish: async () => this.reportFailure(done, err) };
    }
  }

  /** Appends the entry of `done`, if the store holds an audit log; reports a failure, never throws. */
  async record(done: AuditedAction): Promise<AuditEntry | undefined> {
    const log = this.log;
    if (!log) return undefined;
    try {
      return await log.append(this.inputOf(done));
    } catch (err) {
      this.reportFailure(done, err);
      return undefined;
    }
  }

  /** An account's entries (or a key's), newest first; `UnsupportedError` without an audit log. */
  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const log = this.log;
    // Checked here too, so that a bad query is InvalidInputError whatever the backend.
    validAuditQuery(query);
    if (!log) throw new UnsupportedError('store', 'this store keeps no audit log (no audit capability)');
    return log.list(query);
  }

  private inputOf(done: AuditedAction): AuditEntryInput {
    return {
      at: this.nowIso(),
      accountId: done.accountId,
      ...(done.key && { keyId: done.key.id }),
      action: done.action,
      actor: done.context.actor ?? { type: 'api' },
      ...(done.changes && { changes: done.changes }),
      ...(done.context.address !== undefined && { address: done.context.address }),
    };
  }

  private reportFailure(done: AuditedAction, err: unknown): void {
    const errorCode = err instanceof KeygateError ? err.code : 'unknown';
    if (!this.onEvent) {
      // No secret here: ids, the action and keygate's own (redacted) message.
      const message = redactKeys(err instanceof Error ? err.message : String(err));
      console.error(
        `keygate: the audit entry of ${done.action}${done.key ? ` on ${done.key.id}` : ''} (account ${JSON.stringify(done.accountId)}) was not written: ${errorCode}: ${message}`,
      );
      return;
    }
    emitSafely(this.onEvent, {
      type: 'audit.failed',
      keyId: done.key?.id ?? null,
      accountId: done.accountId,
      hint: done.key?.hint ?? null,
      at: this.nowIso(),
      action: done.action,
      errorCode,
    });
  }
}
