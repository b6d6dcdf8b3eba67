import { KeyConflictError, KeyNotFoundError } from '#errors';
import { validAuditEntries } from '../audit/entry.js';
import { MemoryAuditLog } from '../audit/memory.js';
import type { MemoryOutbox } from '../outbox/memory.js';
import { quote } from '../redact/describe.js';
import type { ApiKeyRecord, KeyChangeEvent, KeyPatch, WritableKeyStore, WriteOptions } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { pruneCutoffMs, validPruneArgs } from '../validate/prune.js';
import { CAPABILITIES, type Capabilities, type Capable } from '../vocabulary/capabilities.js';
import type { PruneArgs, PruneResult } from '../vocabulary/retention.js';
import {
  type KeyActivity,
  type UsageBatch,
  type UsageCount,
  type UsageStore,
  utcDay,
} from '../vocabulary/usage-store.js';
import { applyPatch, freezeRecord } from './apply-patch.js';
import { ChangeFeed, changeOf } from './change-feed.js';

/**
 * The embedded key store: everything in this process's memory, nothing persisted. Right for tests,
 * demos and single-process services that create their keys at start-up; use `keygate/postgres` or
 * `keygate/redis` to share keys between processes or keep them across restarts. The dashboard reads it
 * through `MemoryDashboardStore` (`keygate/dashboard`).
 *
 * @example
 * const store = new MemoryKeyStore();
 * const keys = new KeyManager({ store });
 */
export class MemoryKeyStore implements WritableKeyStore, UsageStore, Capable {
  /**
   * Its `changes` (every write, announced in this process), `usage`, `audit` (a `MemoryAuditLog`: no cap,
   * see there) and `auditedWrites` (the same log: a write's `WriteOptions.audit` entries are stored in
   * the same turn as the write) and, when given one, `outbox` (a `MemoryOutbox`: events written in the
   * same turn as their key write).
   */
  declare readonly [CAPABILITIES]: Capabilities;
  private readonly byHash = new Map<string, ApiKeyRecord>();
  private readonly byId = new Map<string, ApiKeyRecord>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly feed = new ChangeFeed();
  private readonly outbox: MemoryOutbox | undefined;
  private readonly audit = new MemoryAuditLog();
  // Usage: keyId -> "day|outcome" -> count, and the newest allowed use per key.
  private readonly usage = new Map<string, Map<string, UsageCount>>();
  private readonly activity = new Map<string, KeyActivity>();

  /**
   * @param options.outbox a `MemoryOutbox` (from `keygate/webhooks`) to hold as the `outbox`
   * capability: every key event is written to it in the same turn as its write. @default undefined (none)
   */
  constructor(options: { outbox?: MemoryOutbox } = {}) {
    checkOptionNames(options, ['outbox'], 'MemoryKeyStore');
    this.outbox = options?.outbox;
    // Set here, not as a class field: a computed field key would keep the class in every bundle.
    this[CAPABILITIES] = {
      changes: this,
      usage: this,
      audit: this.audit,
      auditedWrites: this.audit,
      ...(this.outbox && { outbox: this.outbox }),
    };
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return this.byHash.get(hash) ?? null;
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    return this.byId.get(id) ?? null;
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const ids = this.byAccount.get(accountId);
    if (!ids) return [];
    return [...ids].map((id) => this.byId.get(id) as ApiKeyRecord);
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(options?.audit);
    if (this.byId.has(record.id))
      throw new KeyConflictError(`a key with id ${quote(record.id)} already exists`, { keyId: record.id });
    if (this.byHash.has(record.hash))
      throw new KeyConflictError('a key with the same digest already exists', { keyId: record.id });
    const stored = freezeRecord({ ...record, version: 1 });
    this.put(stored);
    const ids = this.byAccount.get(stored.accountId) ?? new Set<string>();
    this.byAccount.set(stored.accountId, ids.add(stored.id));
    if (options?.events) this.outbox?.appendNow(options.events);
    this.audit.appendNow(entries);
    this.feed.emit(changeOf('created', stored));
    return stored;
  }

  // No await between the read and the write: one event-loop turn makes the conditional write atomic.
  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(condition?.audit);
    const current = this.byId.get(id);
    if (!current) throw new KeyNotFoundError(id);
    const next = applyPatch(current, patch, condition);
    this.put(next);
    if (condition?.events) this.outbox?.appendNow(condition.events);
    this.audit.appendNow(entries);
    this.feed.emit(changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next));
    return next;
  }

  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    return this.feed.subscribe(listener);
  }

  async addUsage(batch: UsageBatch): Promise<void> {
    for (const c of batch.counts) {
      let perKey = this.usage.get(c.keyId);
      if (!perKey) {
        perKey = new Map();
        this.usage.set(c.keyId, perKey);
      }
      const slot = `${c.day}|${c.outcome}`;
      const before = perKey.get(slot)?.count ?? 0;
      perKey.set(slot, { ...c, count: before + c.count });
    }
    for (const a of batch.activity) {
      const current = this.activity.get(a.keyId);
      if (!current || current.lastUsedAt < a.lastUsedAt) this.activity.set(a.keyId, { ...a });
    }
  }

  async getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    const perKey = this.usage.get(keyId);
    if (!perKey) return [];
    return [...perKey.values()].filter((c) => c.day >= from && c.day <= to);
  }

  async getActivity(keyId: string): Promise<KeyActivity | null> {
    return this.activity.get(keyId) ?? null;
  }

  /** Deletes the usage counts of the UTC days that ended more than `olderThanMs` ago (see `UsageStore.prune`). */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const before = utcDay(pruneCutoffMs(validPruneArgs(args, 'UsageStore.prune').olderThanMs));
    let deleted = 0;
    for (const [keyId, perKey] of this.usage) {
      for (const [slot, count] of perKey) {
        if (count.day >= before) continue;
        perKey.delete(slot);
        deleted++;
      }
      if (perKey.size === 0) this.usage.delete(keyId);
    }
    return { deleted };
  }

  private put(record: ApiKeyRecord): void {
    this.byId.set(record.id, record);
    this.byHash.set(record.hash, record);
  }
}
