import { KeygateError, UnsupportedError } from '#errors';
import { validAuditQuery } from '../audit/entry.js';
import { type EventHook, emitSafely } from '../events.js';
import { redactKeys } from '../redact/keys.js';
import type { ApiKeyRecord, WritableKeyStore } from '../types.js';
import type {
  AuditAction,
  AuditChanges,
  AuditContext,
  AuditEntry,
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
 * The `KeyManager`'s side of the audit log: one entry per action, written after the key write it
 * records (not in the same transaction: stores write keys through one call each). A failed append
 * never turns a successful key write into a failure; it is reported instead, as an `audit.failed`
 * event through `onEvent`, or on `console.error` when there is no hook, so it never vanishes.
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

  /** Appends the entry of `done`, if the store holds an audit log; reports a failure, never throws. */
  async record(done: AuditedAction): Promise<AuditEntry | undefined> {
    const log = this.log;
    if (!log) return undefined;
    try {
      return await log.append({
        at: this.nowIso(),
        accountId: done.accountId,
        ...(done.key && { keyId: done.key.id }),
        action: done.action,
        actor: done.context.actor ?? { type: 'api' },
        ...(done.changes && { changes: done.changes }),
        ...(done.context.address !== undefined && { address: done.context.address }),
      });
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
