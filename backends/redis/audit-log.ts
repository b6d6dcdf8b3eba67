import type { AuditEntry, AuditEntryInput, AuditLog, AuditQuery, PruneArgs, PruneResult } from 'keygate/store-kit';
import {
  auditId,
  freezeAuditEntry,
  pruneCutoffMs,
  validAuditEntry,
  validAuditQuery,
  validPruneArgs,
} from 'keygate/store-kit';
import { PRUNE_AUDIT } from './retention-scripts.js';
import { APPEND_AUDIT } from './scripts.js';

/** The most entries one prune script deletes. */
const PRUNE_BATCH = 500;

/** How the log reaches Redis: through its key store's command and script runners (errors already keygate's). */
export interface AuditRedis {
  command(args: string[]): Promise<unknown>;
  run(script: string, keys: string[], args: string[]): Promise<unknown>;
}

/**
 * The audit log of a `RedisKeyStore` (its `audit` capability): a sorted set per account,
 * `<prefix>audit:<account id>`, and one per key of it, `<prefix>audit:<account id>:<key id>` (both ids
 * URI-encoded, so neither a `:` nor a brace in an id can make two names meet or move a cluster hash
 * tag). Each member is `<entry id> <entry JSON>` with score 0: the set orders by id, and a listing is
 * one ZREVRANGEBYLEX. An append adds to both sets in one script, atomically, and to the time index
 * `<prefix>audit-by-time` (member `<id> <account> <key>`, scored by `at` in epoch ms), through which
 * `prune` finds what is older than its cutoff; the entry a `KeyManager` hands with a key write is
 * added, to the sets and the index, by the write's own script. Nothing else in keygate removes a
 * member; Redis itself does not stop a client that does (use ACLs for that).
 */
export class RedisAuditLog implements AuditLog {
  constructor(
    private readonly redis: AuditRedis,
    private readonly prefix: string,
  ) {}

  private setOf(accountId: string, keyId?: string): string {
    const account = `${this.prefix}audit:${encodeURIComponent(accountId)}`;
    return keyId === undefined ? account : `${account}:${encodeURIComponent(keyId)}`;
  }

  // No account set is named so: an account's name is URI-encoded, and `audit-` is not `audit:`.
  private get byTime(): string {
    return `${this.prefix}audit-by-time`;
  }

  private setsOf(entry: AuditEntry): string[] {
    const sets = [this.setOf(entry.accountId)];
    if (entry.keyId !== undefined) sets.push(this.setOf(entry.accountId, entry.keyId));
    return sets;
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    await this.redis.run(APPEND_AUDIT, [this.byTime, ...this.setsOf(entry)], [memberOf(entry), ...timeIndexOf(entry)]);
    return entry;
  }

  /**
   * The keys and arguments of `append_audit` for entries already made (see `scripts.ts`): how a key
   * write's script adds its entries (`WriteOptions.audit`) in the same script, to their sets and to
   * the time index `prune` reads.
   *
   * @example
   * const { keys, args } = log.appendArgs(validAuditEntries(options?.audit));
   */
  appendArgs(entries: readonly AuditEntry[]): { keys: string[]; args: string[] } {
    const keys: string[] = [];
    const args = [String(entries.length)];
    for (const entry of entries) {
      const sets = this.setsOf(entry);
      keys.push(this.byTime, ...sets);
      args.push(memberOf(entry), String(sets.length), ...timeIndexOf(entry));
    }
    return { keys, args };
  }

  /** Deletes the entries older than the cutoff, oldest first by the time index, 500 per script. */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoffMs = pruneCutoffMs(validPruneArgs(args, 'AuditLog.prune').olderThanMs);
    let deleted = 0;
    for (;;) {
      const n = Number(
        await this.redis.run(PRUNE_AUDIT, [this.byTime], [String(cutoffMs), String(PRUNE_BATCH), this.prefix]),
      );
      deleted += n;
      if (n < PRUNE_BATCH) return { deleted };
    }
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    // `(<id>` excludes the entry itself: its member `<id> {...}` sorts after the bare id.
    const members = (await this.redis.command([
      'ZREVRANGEBYLEX',
      this.setOf(accountId, keyId),
      before === undefined ? '+' : `(${before}`,
      '-',
      'LIMIT',
      '0',
      String(limit),
    ])) as string[];
    return members.map(entryOf);
  }
}

// `<id> <entry JSON without its id>`: the set orders members by id.
// An entry's place in the time index: its score (`at` in epoch ms) and member (`<id> <account> <key>`).
function timeIndexOf(entry: AuditEntry): [string, string] {
  const key = entry.keyId === undefined ? '' : encodeURIComponent(entry.keyId);
  return [String(Date.parse(entry.at)), `${entry.id} ${encodeURIComponent(entry.accountId)} ${key}`];
}

function memberOf(entry: AuditEntry): string {
  const { id, ...rest } = entry;
  return `${id} ${JSON.stringify(rest)}`;
}

function entryOf(member: string): AuditEntry {
  const space = member.indexOf(' ');
  return freezeAuditEntry(member.slice(0, space), JSON.parse(member.slice(space + 1)) as AuditEntryInput);
}
