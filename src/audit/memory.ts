import { pruneCutoffMs, validPruneArgs } from '../validate/prune.js';
import type { AuditEntry, AuditEntryInput, AuditLog, AuditQuery } from '../vocabulary/audit-log.js';
import type { PruneArgs, PruneResult } from '../vocabulary/retention.js';
import { auditEntryOf, validAuditQuery } from './entry.js';

/**
 * The audit log of a `MemoryKeyStore` (its `audit` capability): entries in this process's memory, in
 * the order appended (ids increase within a process), kept for the life of the store like its keys.
 * It has no cap and drops nothing by itself: an audit log that forgets is no audit log, and a process
 * that keeps its keys in memory makes few management calls; `prune` deletes what the operator's
 * retention no longer keeps. Gone when the process exits, like the keys.
 *
 * @example
 * const log = capabilityOf(new MemoryKeyStore(), 'audit');
 * await log?.list({ accountId: 'acct_1' });
 */
export class MemoryAuditLog implements AuditLog {
  // Oldest first, per account and per (account, key): the key's entries are a subset of its account's.
  private readonly byAccount = new Map<string, AuditEntry[]>();
  private readonly byKey = new Map<string, AuditEntry[]>();

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const [entry] = this.appendNow([auditEntryOf(input)]);
    return entry as AuditEntry;
  }

  /**
   * Stores entries already made (`auditEntryOf`, or checked by `validAuditEntries`) at once, in the
   * caller's turn of the event loop: how `MemoryKeyStore` writes a key write's entries in the same
   * turn as the write. Returns them.
   *
   * @example
   * log.appendNow(validAuditEntries(options?.audit));
   */
  appendNow(entries: readonly AuditEntry[]): readonly AuditEntry[] {
    for (const entry of entries) {
      push(this.byAccount, entry.accountId, entry);
      if (entry.keyId !== undefined) push(this.byKey, scope(entry.accountId, entry.keyId), entry);
    }
    return entries;
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    const entries =
      (keyId === undefined ? this.byAccount.get(accountId) : this.byKey.get(scope(accountId, keyId))) ?? [];
    // Entries are frozen: handing out the stored objects lets nobody change them.
    const end = before === undefined ? entries.length : firstAtOrAfter(entries, before);
    return entries.slice(Math.max(0, end - limit), end).reverse();
  }

  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoff = pruneCutoffMs(validPruneArgs(args, 'AuditLog.prune').olderThanMs);
    const kept = (entry: AuditEntry) => Date.parse(entry.at) >= cutoff;
    let deleted = 0;
    for (const [index, counted] of [
      [this.byAccount, true],
      [this.byKey, false],
    ] as const) {
      for (const [name, entries] of index) {
        const left = entries.filter(kept);
        if (counted) deleted += entries.length - left.length;
        if (left.length === 0) index.delete(name);
        else if (left.length < entries.length) index.set(name, left);
      }
    }
    return { deleted };
  }
}

// A separator no account id holds (control characters are refused in account ids).
const scope = (accountId: string, keyId: string) => `${accountId}\u0000${keyId}`;

// Kept sorted by id: an entry made before another but written after it (two managers' writes) goes in its place.
function push(index: Map<string, AuditEntry[]>, name: string, entry: AuditEntry): void {
  const list = index.get(name);
  if (!list) index.set(name, [entry]);
  else if ((list.at(-1) as AuditEntry).id < entry.id) list.push(entry);
  else list.splice(firstAtOrAfter(list, entry.id), 0, entry);
}

// The position of the first entry whose id is `id` or later (entries are sorted by id).
function firstAtOrAfter(entries: readonly AuditEntry[], id: string): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((entries[mid] as AuditEntry).id < id) low = mid + 1;
    else high = mid;
  }
  return low;
}
